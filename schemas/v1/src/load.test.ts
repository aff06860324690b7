import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { createAjv } from './create-ajv.js'
import { denyVerdict, httpReceipt, variant } from './examples/values.js'
import { assertValid, compileAllSchemas, getSchema, getValidator, validate, validators } from './load.js'
import { HTTP_SCHEMA_IDS, SCHEMA_IDS, VALIDATOR_NAMES } from './schema-ids.js'

const packageRoot = new URL('../', import.meta.url)

t.test('the HTTP family is exactly the 15 schemas spec 02 lists', async (t) => {
  t.same(
    [...HTTP_SCHEMA_IDS].sort(),
    [
      'gate.hosted.authenticated_request_context.v1',
      'gate.hosted.domain_event_envelope.v1',
      'gate.hosted.error.v1',
      'gate.hosted.mutation_response.v1',
      'gate.hosted.tenant_binding.v1',
      'gate.http.caller_identity.v1',
      'gate.http.error_envelope.v1',
      'gate.http.evaluate_request.v1',
      'gate.http.evaluate_response.v1',
      'gate.http.receipt.v1',
      'gate.http.request.v1',
      'gate.http.session_init.v1',
      'gate.http.session_resume.v1',
      'gate.http.stream_frame.v1',
      'gate.http.verdict.v1',
    ],
  )
  t.equal(new Set(SCHEMA_IDS).size, SCHEMA_IDS.length, 'no id is listed twice')
  for (const id of HTTP_SCHEMA_IDS) t.ok(SCHEMA_IDS.includes(id), `${id} is shipped`)
  t.ok(Object.isFrozen(SCHEMA_IDS) && Object.isFrozen(HTTP_SCHEMA_IDS), 'the lists are frozen')
})

t.test("every JSON file at the package root is a registered schema whose $id is its file name", async (t) => {
  const files = readdirSync(packageRoot).filter((name) => /^gate\..+\.json$/.test(name))
  t.same(files.map((name) => name.slice(0, -'.json'.length)).sort(), [...SCHEMA_IDS].sort())
  for (const file of files) {
    const schema = JSON.parse(readFileSync(new URL(file, packageRoot), 'utf8')) as Record<string, unknown>
    t.equal(schema.$id, file.slice(0, -'.json'.length), `${file} has a matching $id`)
    t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', `${file} is draft 2020-12`)
  }
})

t.test('every schema is a valid draft 2020-12 schema and compiles in strict mode', async (t) => {
  const ajv = createAjv([], { validateSchema: true })
  for (const id of SCHEMA_IDS) t.ok(ajv.validateSchema(getSchema(id)), `${id} passes the meta-schema`, { errors: ajv.errors })
  const elapsedMs = compileAllSchemas()
  t.comment(`compiling all ${SCHEMA_IDS.length} schemas took ${elapsedMs.toFixed(1)} ms`)
  for (const id of SCHEMA_IDS) t.type(getValidator(id), 'function', `${id} compiled`)
})

t.test('every $ref names a shipped schema or a local definition', async (t) => {
  const refs: string[] = []
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(collect)
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') refs.push(value)
        else collect(value)
      }
    }
  }
  for (const id of SCHEMA_IDS) collect(getSchema(id))
  for (const ref of refs) {
    const base = ref.split('#')[0] ?? ''
    t.ok(base === '' || (SCHEMA_IDS as readonly string[]).includes(base), `${ref} resolves`)
  }
})

t.test('getSchema returns the frozen file contents', async (t) => {
  const schema = getSchema('gate.http.verdict.v1')
  t.equal(schema.$id, 'gate.http.verdict.v1')
  t.ok(Object.isFrozen(schema))
  t.throws(() => {
    ;(schema as Record<string, unknown>).$id = 'changed'
  }, TypeError)
  t.equal(getSchema('gate.http.verdict.v1').$id, 'gate.http.verdict.v1')
})

t.test('an unknown schema id throws gate_unknown_schema from every entry point', async (t) => {
  for (const id of ['gate.unknown.v1', '', 'gate.http.request.v2', 'constructor', '__proto__', 'toString']) {
    for (const [name, call] of [
      ['getSchema', () => getSchema(id)],
      ['getValidator', () => getValidator(id)],
      ['validate', () => validate(id, {})],
      ['assertValid', () => assertValid(id, {})],
    ] as const) {
      t.throws(call, { name: 'UnknownSchemaError', code: 'gate_unknown_schema', status: 400, schemaId: id }, `${name}(${JSON.stringify(id)})`)
    }
  }
})

t.test('assertValid throws 400 gate_bad_request naming the schema and the failing pointer', async (t) => {
  t.doesNotThrow(() => assertValid('gate.http.verdict.v1', { verdict: 'allow' }))
  t.throws(() => assertValid('gate.http.verdict.v1', { verdict: 'deny', reason: 'r', guard: 'G', http_status: 99 }), {
    name: 'SchemaValidationError',
    code: 'gate_bad_request',
    status: 400,
    schemaId: 'gate.http.verdict.v1',
    errors: ['/http_status: must be >= 100'],
  })
})

t.test('validate answers ok or the errors, one line each led by the JSON pointer', async (t) => {
  t.same(validate('gate.http.receipt.v1', httpReceipt()), { ok: true })
  t.same(validate('gate.http.receipt.v1', { ...httpReceipt(), observation_outcome: 'x' }), {
    ok: false,
    errors: ['/observation_outcome: must not be present'],
  })
  t.same(validate('gate.http.receipt.v1', { ...httpReceipt(), extra: undefined, evidence: [{ guard_name: 'G', verdict: 'yes' }] }), {
    ok: false,
    errors: ['/evidence/0/verdict: must be boolean'],
  })
  t.same(validate('gate.http.verdict.v1', 'allow'), { ok: false, errors: ['(root): must be object'] })
  t.same(validate('gate.http.verdict.v1', { verdict: 'block' }), { ok: false, errors: ['(root): unknown verdict "block"'] })
  t.same(validate('gate.http.verdict.v1', {}), { ok: false, errors: ['(root): must have a string member "verdict"'] })
  t.same(validate('gate.http.request.v1', { extra: 1 }), { ok: false, errors: ["(root): must have required property 'request_id'"] })
  const withCookie = { request_id: 'r', method: 'GET', route_pattern: '/', path: '/', timestamp: 0, caller: { subject: 'anonymous', auth_method: { method: 'anonymous' } }, headers: { Cookie: 'sid=1' } }
  t.same(validate('gate.http.request.v1', withCookie), { ok: false, errors: ['/headers: must not have member "Cookie"'] })
  t.same(validate('gate.http.request.v1', { ...withCookie, headers: {}, ['k'.repeat(1000)]: 1 }), {
    ok: false,
    errors: [`(root): must not have member "${'k'.repeat(76)}...`],
  })
  t.same(validate('gate.http.receipt.v1', { ...httpReceipt(), receipt_kind: 'x' }), { ok: false, errors: ['/receipt_kind: must be "mediated_decision"'] })
})

t.test('validators holds one compiled validator per schema, named after its id', async (t) => {
  t.same(Object.keys(validators).sort(), Object.values(VALIDATOR_NAMES).sort())
  t.ok(Object.isFrozen(validators))
  for (const id of SCHEMA_IDS) t.equal(validators[VALIDATOR_NAMES[id]], getValidator(id), `${VALIDATOR_NAMES[id]} is the ${id} validator`)
  t.equal(validators.httpReceipt(httpReceipt()), true)
  t.equal(validators.httpRequest({}), false)
  t.match(validators.httpRequest.errors, [{ keyword: 'required' }])
})

t.test('a deny without http_status stays without it: validation never applies the 403 default', async (t) => {
  const deny = variant(denyVerdict(), (v) => delete v.http_status)
  const receipt = variant(httpReceipt(), (v) => (v.verdict = structuredClone(deny)))
  t.equal((getSchema('gate.http.verdict.v1').$defs as any).deny.properties.http_status.default, 403, 'the schema documents the default')
  t.same(validate('gate.http.verdict.v1', deny), { ok: true })
  t.notOk('http_status' in deny, 'the verdict was not filled in')
  t.same(validate('gate.http.receipt.v1', receipt), { ok: true })
  t.notOk('http_status' in receipt.verdict, 'the signed receipt was not changed')
  // What useDefaults would do: change a signed receipt's bytes, breaking its id and signature.
  const mutating = createAjv(SCHEMA_IDS.map((id) => getSchema(id)), { useDefaults: true })
  const copy = structuredClone(receipt)
  t.ok(mutating.getSchema('gate.http.receipt.v1')?.(copy))
  t.equal(copy.verdict.http_status, 403, 'a useDefaults validator would insert 403')
})
