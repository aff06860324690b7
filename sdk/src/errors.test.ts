// errors.ts against the spec's code tables, both ways (STYLE: "A test checks both ways").
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ERROR_STATUS, SDK_ERROR_CODES, SIDECAR_ERROR_CODES, GateError, isGateError, BadRequestError } from './index.js'

const specDir = process.env.GATE_SPEC_DIR ?? new URL('../../../shared/spec/', import.meta.url).pathname
const doc2 = readFileSync(`${specDir}/02-sidecar-protocol-and-receipts.md`, 'utf8')
const errorsPart = doc2.slice(doc2.indexOf('## Errors'), doc2.indexOf('## Limits'))

t.test('the sidecar code table matches the spec, codes and statuses', async t => {
  const rows = [...errorsPart.matchAll(/^\| `(gate_[a-z_]+)` \| (\d{3})/gm)].map(m => [m[1]!, Number(m[2])] as const)
  t.ok(rows.length >= 6)
  t.same(rows.map(r => r[0]).sort(), [...SIDECAR_ERROR_CODES].sort(), 'same set of codes')
  for (const [code, status] of rows) t.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], status, code)
})

t.test('the SDK-side codes match the spec', async t => {
  const sdkPart = errorsPart.slice(errorsPart.indexOf('SDK-side error codes'), errorsPart.indexOf('Fail-closed rule'))
  const codes = [...new Set([...sdkPart.matchAll(/`(gate_[a-z_]+)`/g)].map(m => m[1]!))].sort()
  t.same(codes, [...SDK_ERROR_CODES].sort())
  for (const c of codes) t.ok(c in ERROR_STATUS, `${c} is defined`)
})

t.test('every code is snake_case gate_* and maps to an HTTP status', async t => {
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    t.match(code, /^gate_[a-z]+(_[a-z]+)*$/)
    t.ok(status >= 400 && status <= 599, code)
  }
})

t.test('GateError carries code, status and cause; the brand survives duplicate installs', async t => {
  const cause = new Error('inner')
  const e = new BadRequestError('query key "a" appears more than once', cause)
  t.equal(e.code, 'gate_bad_request')
  t.equal(e.status, 400)
  t.equal(e.cause, cause)
  t.ok(e instanceof GateError)
  t.ok(isGateError(e))
  t.ok(isGateError({ [Symbol.for('gate.error')]: true }), 'branded object from another copy')
  t.notOk(isGateError(new Error('x')))
})
