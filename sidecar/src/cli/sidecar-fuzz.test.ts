// Generated hostile input against the real `gate sidecar` (fast-check, fixed seeds, bounded runs).
// Evaluate bodies are valid GateHttpRequests with up to three mutations each (members dropped, retyped,
// unknown members, hostile strings: empty, huge, control characters, lone surrogates), plus raw bodies
// (bytes, truncated JSON, a repeated query key), under random Gate headers. What each answer must be:
// the test predicts 200 or 400 from its own reading of the body (JSON, I-JSON, schemas/v1, the query
// keys, the Gate headers); a 200 is an EvaluateResponse whose receipt verifies against the sidecar's key;
// a 400 is a short gate_bad_request body. Never a 5xx: bad input is the client's error. The same for
// /gate/verify with tampered receipts, and for the control routes' bodies. Then the sidecar is killed
// (SIGKILL), and every receipt it acknowledged is in the SQLite file.
import t from 'tap'
import fc from 'fast-check'
import { ANONYMOUS_CALLER, canonicalJson, createSigner, generateSecret, HTTP_METHODS, uuidv7, verifyCapability, verifyHttpReceipt } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'
import { call, schemaErrors, type JsonResponse } from '../testing/http-client.js'

const TOKEN = 'fuzz-control-token-' + 'x'.repeat(16)
const auth = { authorization: `Bearer ${TOKEN}` }
const NONCE_ID = /^[0-9a-f]{32}$/
const APPROVAL_ID = /^[\x21-\x7e]+$/
const hex64 = (c: string) => c.repeat(64)

// Strings an attacker would try, and strings with lone surrogates (one code unit in eight a surrogate).
const surrogateUnit = fc
  .oneof({ arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 7 }, { arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }), weight: 1 })
  .map(c => String.fromCharCode(c))
const hostileString = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: surrogateUnit, maxLength: 12 }),
  fc.constantFrom('', ' ', '\u0000', '\u001b[31m', '\u202e', '💥', '\ud800', 'a\udfffb', '../../etc/passwd', '%00', '%ZZ', '/pets/../approvals', '__proto__', 'a'.repeat(70_000)),
)
const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: surrogateUnit })
const hostileValue = fc.oneof(hostileString, anyJson, fc.constantFrom(-1, 1.5, 2 ** 53, 1e300, true, null, [], {}))

const CALLERS = [
  ANONYMOUS_CALLER,
  { subject: 'user-1', auth_method: { method: 'bearer', token_hash: hex64('a') }, verified: false, tenant: 'acme', agent_id: null },
  { subject: 'svc', auth_method: { method: 'api_key', key_name: 'x-api-key', key_hash: hex64('b') }, verified: false },
]

const validRequest = fc.record({
  method: fc.constantFrom(...HTTP_METHODS),
  path: fc.constantFrom('/pets', '/pets/7', '/pets/7/adopt', '/pets/search', '/unknown/route', '/', '', 'pets', '*'),
  caller: fc.constantFrom(...CALLERS),
  timestamp: fc.integer({ min: 0, max: 2 ** 31 }),
  query: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }), { nil: undefined }),
})

const TOP_KEYS = ['request_id', 'method', 'route_pattern', 'path', 'caller', 'timestamp', 'query', 'headers', 'body_hash', 'body_length', 'session_id', 'capability_id', 'tool_server', 'tool_name', 'arguments', 'supplemental_authorization', 'execution_nonce', 'extra', '__proto__', 'constructor']
const CALLER_KEYS = ['subject', 'auth_method', 'verified', 'tenant', 'agent_id', 'extra']

type Mutation =
  | { op: 'drop'; key: string }
  | { op: 'set'; key: string; value: unknown }
  | { op: 'caller'; key: string; value: unknown }
  | { op: 'query' | 'headers'; value: Record<string, string> }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('drop' as const), key: fc.constantFrom(...TOP_KEYS) }),
  fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...TOP_KEYS), value: hostileValue }),
  fc.record({ op: fc.constant('caller' as const), key: fc.constantFrom(...CALLER_KEYS), value: hostileValue }),
  fc.record({ op: fc.constantFrom('query' as const, 'headers' as const), value: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }) }),
)

// An own member even for "__proto__" (plain assignment would set the prototype instead).
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}

function mutated(base: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base, caller: { ...(base.caller as object) } }
  for (const m of mutations) {
    if (m.op === 'drop') delete out[m.key]
    else if (m.op === 'set') put(out, m.key, m.value)
    else if (m.op === 'caller') {
      if (typeof out.caller === 'object' && out.caller !== null && !Array.isArray(out.caller)) put(out.caller as Record<string, unknown>, m.key, m.value)
    } else put(out, m.op, m.value)
  }
  return out
}

// The Gate headers of an evaluate call: absent, or printable ASCII (what HTTP carries), the nonce
// sometimes in its exact form.
const ascii40 = fc.string({ unit: 'grapheme-ascii', maxLength: 40 })
const gateHeaders = fc
  .record({
    'x-gate-capability': fc.option(ascii40, { nil: undefined }),
    'x-gate-approval-id': fc.option(ascii40, { nil: undefined }),
    'x-gate-execution-nonce': fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      { arbitrary: ascii40, weight: 1 },
      { arbitrary: fc.stringMatching(/^[0-9a-f]{32}$/), weight: 1 },
    ),
  })
  .map(headers => Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>)

/** Lone surrogates survive JSON.stringify only as \udXXX escapes (pairs are written as they are). */
function hasLoneSurrogate(value: unknown): boolean {
  return /\\ud[89a-f]/i.test(JSON.stringify(value) ?? '')
}

/** What the test expects of a body and headers, from its own reading of them. */
function expectedStatus(text: string, headers: Record<string, string>, repeatedQueryKey: boolean): 200 | 400 {
  // the Gate header rules (docs/security.md), on the values as the server reads them (trimmed)
  const nonce = headers['x-gate-execution-nonce']?.trim()
  if (nonce !== undefined && !NONCE_ID.test(nonce)) return 400
  const approvalId = headers['x-gate-approval-id']?.trim()
  if (approvalId !== undefined && !APPROVAL_ID.test(approvalId)) return 400
  if (headers['x-gate-capability']?.trim() === '') return 400
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 400
  }
  if (hasLoneSurrogate(value) || !validate('gate.http.request.v1', value).ok || repeatedQueryKey) return 400
  // an HTTP path: origin-form
  if (!(value as { path: string }).path.startsWith('/')) return 400
  return 200
}

// A case that breaks an invariant throws: fast-check shrinks it and fc.assert fails the subtest with
// the smallest counterexample and this message. Each subtest ends with one line saying what ran.
function broken(message: string): never {
  throw new Error(message)
}

function checkBadRequest(r: JsonResponse, what: string): boolean {
  const body = r.body as { error?: string; message?: string }
  const schema = schemaErrors('gate.http.error_body.v1', r.body)
  if (schema.length > 0 || body?.error !== 'gate_bad_request' || typeof body.message !== 'string' || body.message === '' || body.message.length > 2000) {
    return broken(`${what}: expected a short gate_bad_request body, got ${r.text.slice(0, 300)} (${schema.join('; ')})`)
  }
  return true
}

t.test('hostile input never gets a 5xx, and every acknowledged receipt is stored', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const kernelKey = (await call(`${gate.url}/gate/live`)).body as { kernel_key: string }
  const acknowledged = new Set<string>()
  const counts = { 200: 0, 400: 0 }
  const genuine: Record<string, unknown>[] = []

  const evaluate = async (text: string | Buffer, headers: Record<string, string>, expected: 200 | 400, what: string, requestId?: unknown) => {
    const r = await call(`${gate.url}/gate/evaluate`, { rawBody: text, headers: { 'content-type': 'application/json', ...headers } })
    if (r.status !== expected) broken(`${what}: expected ${expected}, got ${r.status} ${r.text.slice(0, 300)}`)
    counts[expected]++
    if (expected === 400) return checkBadRequest(r, what)
    const body = r.body as { receipt: Record<string, unknown> & { id: string } }
    const errors = schemaErrors('gate.http.evaluate_response.v1', body)
    const verified = verifyHttpReceipt(body.receipt, { trustedKeys: [kernelKey.kernel_key] })
    if (errors.length > 0 || !verified.ok || r.headers['x-gate-receipt-id'] !== body.receipt.id || body.receipt.request_id !== requestId) {
      broken(`${what}: bad 200 answer (${errors.join('; ')}; verified ${verified.ok}): ${r.text.slice(0, 300)}`)
    }
    acknowledged.add(body.receipt.id)
    if (genuine.length < 20) genuine.push(body.receipt)
    return true
  }

  await t.test('POST /gate/evaluate: mutated requests under random Gate headers', async t => {
    await fc.assert(
      fc.asyncProperty(validRequest, fc.array(mutation, { maxLength: 3 }), gateHeaders, async (base, mutations, headers) => {
        const request = mutated({ request_id: uuidv7(), route_pattern: base.path, ...base, ...(base.query === undefined ? { query: undefined } : {}) }, mutations)
        const text = JSON.stringify(request)
        return evaluate(text, headers, expectedStatus(text, headers, false), `${text.slice(0, 200)} ${JSON.stringify(headers)}`, request.request_id)
      }),
      { numRuns: 400, seed: 1122, includeErrorInReport: true },
    )
    t.ok(counts[200] > 50 && counts[400] > 50, `both answers were exercised (${counts[200]} × 200, ${counts[400]} × 400)`)
  })

  await t.test('POST /gate/evaluate: raw bodies', async t => {
    const valid = JSON.stringify({ request_id: 'raw-1', method: 'GET', route_pattern: '/pets', path: '/pets', caller: ANONYMOUS_CALLER, timestamp: 1, query: { a: '1' } })
    const raw = fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map(b => ({ body: Buffer.from(b) as string | Buffer, repeated: false })),
      fc.string({ maxLength: 64 }).map(s => ({ body: s as string | Buffer, repeated: false })),
      fc.integer({ min: 0, max: valid.length }).map(n => ({ body: valid.slice(0, n) as string | Buffer, repeated: false })),
      fc.constantFrom(
        { body: valid.replace('{"a":"1"}', '{"a":"1","a":"2"}'), repeated: true },
        { body: valid.replace('{"a":"1"}', '{"a":"1","\\u0061":"2"}'), repeated: true },
        { body: valid.replace('"query"', '"query":{},"query"'), repeated: false },
        { body: '\ufeff' + valid, repeated: false },
        { body: `  ${valid}\n\n`, repeated: false },
        { body: valid, repeated: false },
      ),
    )
    await fc.assert(
      fc.asyncProperty(raw, async ({ body, repeated }) => {
        const text = typeof body === 'string' ? body : body.toString('utf8')
        const expected = expectedStatus(text, {}, repeated)
        return evaluate(body, {}, expected, `raw ${JSON.stringify(text.slice(0, 120))}`, expected === 200 ? JSON.parse(text).request_id : undefined)
      }),
      { numRuns: 150, seed: 2211, includeErrorInReport: true },
    )
    t.pass('150 raw bodies answered as predicted')
  })

  await t.test('POST /gate/verify: tampered receipts are answered, never a 5xx', async t => {
    t.ok(genuine.length > 0, 'genuine receipts to tamper with')
    const seen: Record<number, number> = {}
    const tamper = fc.record({ receipt: fc.constantFrom(...genuine), key: fc.constantFrom(...Object.keys(genuine[0]!), 'extra'), value: fc.option(hostileValue, { nil: undefined }) })
    await fc.assert(
      fc.asyncProperty(tamper, async ({ receipt, key, value }) => {
        const changed: Record<string, unknown> = { ...receipt }
        if (value === undefined) delete changed[key]
        else put(changed, key, value)
        const text = JSON.stringify(changed)
        const r = await call(`${gate.url}/gate/verify`, { rawBody: text, headers: { 'content-type': 'application/json' } })
        const what = `verify with ${key} = ${JSON.stringify(value)?.slice(0, 80)}`
        seen[r.status] = (seen[r.status] ?? 0) + 1
        if (r.status === 400) return checkBadRequest(r, what)
        if (r.status !== 200 || hasLoneSurrogate(changed)) return broken(`${what}: ${r.status} ${r.text.slice(0, 300)}`)
        const unchanged = canonicalJson(changed) === canonicalJson(receipt)
        const answer = r.body as { ok: boolean }
        const schema = schemaErrors('gate.http.verify_response.v1', answer)
        if (schema.length > 0) return broken(`${what}: response schema: ${schema.join('; ')}`)
        return answer.ok === unchanged || broken(`${what}: ok ${answer.ok}, but the receipt is ${unchanged ? 'unchanged' : 'changed'}`)
      }),
      { numRuns: 150, seed: 3322, includeErrorInReport: true },
    )
    t.pass(`150 tampered receipts answered: ${JSON.stringify(seen)} by status`)
  })

  await t.test('control routes: hostile bodies get 200 or 4xx, and what is issued verifies', async t => {
    const subject = createSigner({ secret: generateSecret() }).publicKey
    const issueBody = fc.oneof(
      fc.record({ subjectPublicKey: fc.constant(subject), scope: fc.record({ grants: fc.array(fc.record({ server_id: fc.oneof(fc.constant('http'), hostileString), tool_name: hostileString }), { maxLength: 3 }) }), ttlSeconds: fc.oneof(fc.constant(60), hostileValue) }),
      fc.dictionary(fc.constantFrom('subjectPublicKey', 'scope', 'ttlSeconds', 'extra'), hostileValue),
    )
    await fc.assert(
      fc.asyncProperty(issueBody, async body => {
        const r = await call(`${gate.url}/v1/capabilities/issue`, { rawBody: JSON.stringify(body), headers: { ...auth, 'content-type': 'application/json' } })
        const what = `issue ${JSON.stringify(body).slice(0, 200)}`
        if (r.status === 400) return typeof (r.body as { error?: unknown })?.error === 'string' || broken(`${what}: 400 without an error string`)
        if (r.status !== 200) return broken(`${what}: ${r.status} ${r.text.slice(0, 300)}`)
        const verified = verifyCapability((r.body as { capability: unknown }).capability, { trustedIssuers: [kernelKey.kernel_key], now: Math.floor(Date.now() / 1000) })
        return verified.ok || broken(`${what}: issued a capability that does not verify: ${JSON.stringify(verified)}`)
      }),
      { numRuns: 120, seed: 4433, includeErrorInReport: true },
    )
    t.pass('120 generated issue bodies: 200 with a verifying capability, or 400')

    // pending approvals to answer with hostile bodies: a capability for the approval route, then requests
    const issued = await call(`${gate.url}/v1/capabilities/issue`, { body: { subjectPublicKey: subject, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/{id}/adopt' }] }, ttlSeconds: 3600 }, headers: auth })
    const header = Buffer.from(JSON.stringify((issued.body as { capability: unknown }).capability)).toString('base64url')
    const approvalIds: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await call(`${gate.url}/gate/evaluate`, { body: { request_id: uuidv7(), method: 'POST', route_pattern: '/pets/1/adopt', path: '/pets/1/adopt', caller: ANONYMOUS_CALLER, timestamp: 1 }, headers: { 'x-gate-capability': header } })
      approvalIds.push((r.body as { approval: { approval_id: string } }).approval.approval_id)
      acknowledged.add((r.body as { receipt: { id: string } }).receipt.id)
    }
    const respond = fc.record({
      id: fc.oneof({ arbitrary: fc.constantFrom(...approvalIds), weight: 3 }, { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map(encodeURIComponent), weight: 1 }),
      body: fc.oneof(
        fc.record({ decision: fc.constantFrom('approve', 'deny'), reason: fc.option(hostileString, { nil: undefined }), responder: fc.option(hostileString, { nil: undefined }) }, { requiredKeys: ['decision'] }),
        fc.dictionary(fc.constantFrom('decision', 'reason', 'responder', 'extra'), hostileValue),
      ),
    })
    await fc.assert(
      fc.asyncProperty(respond, async ({ id, body }) => {
        const r = await call(`${gate.url}/approvals/${id}/respond`, { rawBody: JSON.stringify(body), headers: { ...auth, 'content-type': 'application/json' } })
        const what = `respond ${id} ${JSON.stringify(body).slice(0, 200)}`
        // 405: an id of "." or ".." is resolved away by the client's URL parser (POST /approvals/respond)
        if (![200, 400, 404, 405, 409].includes(r.status)) return broken(`${what}: ${r.status} ${r.text.slice(0, 300)}`)
        if (r.status !== 200) return schemaErrors('gate.http.error_body.v1', r.body).length === 0 || broken(`${what}: error body ${r.text.slice(0, 300)}`)
        const receiptId = (r.body as { receipt_id: string }).receipt_id
        acknowledged.add(receiptId)
        return r.headers['x-gate-receipt-id'] === receiptId || broken(`${what}: no receipt header`)
      }),
      { numRuns: 120, seed: 5544, includeErrorInReport: true },
    )
    t.pass('120 generated approval answers: 200 with a receipt, or 400 / 404 / 405 / 409 with an error body')
  })

  const health = await call(`${gate.url}/gate/health`)
  t.equal(health.status, 200, 'still healthy after the run')
  await gate.stop('SIGKILL')
  const { missing, invalid } = await checkStoredReceipts(db, acknowledged, kernelKey.kernel_key)
  t.same(missing, [], `every one of the ${acknowledged.size} acknowledged receipts is stored after SIGKILL`)
  t.same(invalid, [], 'and verifies')
})
