import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { SchemaError, SchemaValidationError, UnknownSchemaError } from './errors.js'
import { getSchema } from './load.js'

// CI clones the repository with shared/ beside it (spec 02 lives there).
const SPEC_02 = new URL('../../../../shared/spec/02-sidecar-protocol-and-receipts.md', import.meta.url)

function specErrorCodes(): Set<string> {
  const spec = readFileSync(SPEC_02, 'utf8')
  const section = spec.slice(spec.indexOf('\n## Errors'), spec.indexOf('\n## Limits'))
  return new Set(section.match(/gate_[a-z_]+/g) ?? [])
}

// Gate's own service codes (documented in the schema and in schemas/v1/README.md).
const GATE_SERVICE_CODES = ['gate_payload_too_large', 'gate_not_found', 'gate_method_not_allowed', 'gate_unauthorized', 'gate_forbidden', 'gate_conflict']

t.test("the error body's codes are spec 02's sidecar and SDK codes plus Gate's service codes, both ways", async (t) => {
  t.ok(existsSync(SPEC_02), 'spec 02 is beside the repository')
  const expected = new Set([...specErrorCodes(), ...GATE_SERVICE_CODES])
  const errorProperty = (getSchema('gate.http.error_body.v1').properties as Record<string, { enum: string[] }>).error
  const actual = new Set(errorProperty?.enum)
  for (const code of expected) t.ok(actual.has(code), `schema lists ${code}`)
  for (const code of actual) t.ok(expected.has(code), `spec (or Gate) defines ${code}`)
})

t.test("this package's codes: gate_bad_request from spec 02, gate_unknown_schema its own", async (t) => {
  t.ok(specErrorCodes().has('gate_bad_request'))
  const invalid = new SchemaValidationError('gate.http.verdict.v1', ['/http_status: must be >= 100'])
  t.ok(invalid instanceof SchemaError && invalid instanceof Error)
  t.match(invalid, {
    name: 'SchemaValidationError',
    code: 'gate_bad_request',
    status: 400,
    schemaId: 'gate.http.verdict.v1',
    errors: ['/http_status: must be >= 100'],
    message: 'value does not match gate.http.verdict.v1: /http_status: must be >= 100',
  })
  t.ok(Object.isFrozen(invalid.errors))
  const unknown = new UnknownSchemaError('gate.nope.v1')
  t.match(unknown, { name: 'UnknownSchemaError', code: 'gate_unknown_schema', status: 400, schemaId: 'gate.nope.v1' })
  t.equal(unknown.message, 'unknown schema id "gate.nope.v1"')
})
