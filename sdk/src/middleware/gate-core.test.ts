// The middleware core against real servers: the fake sidecar (a node:http server signing with the
// protocol functions) for every verdict and fault, a closed port for "sidecar down".
import t, { type Test } from 'tap'
import { validate } from '@gate/schemas'
import { appTarget, createGateCore, type GateDenied, type GateOutcome, type GateRequestInput } from '../index.js'
import { checkHttpReceipt } from '../protocol/http-receipt.js'
import { canonicalJson } from '../protocol/canonical-json.js'
import { isCanonicalJsonText, jsonObjectMembers } from '../protocol/json-text.js'
import { createGateCoreOn } from './gate-core.js'
import { createUndiciTransport } from './undici-transport.js'
import { sha256Hex } from '../protocol/sha256.js'
import { ANONYMOUS_CALLER } from '../protocol/content-hash.js'
import { uuidv7 } from '../protocol/request-id.js'
import { call, closedPortUrl, GATE_CLI, hasSidecarBuild, startFakeSidecar, startSidecarProcess, unreachableSidecarUrl, type FakeSidecar, type TestTransport } from './testing/index.js'

function input(over: Partial<GateRequestInput> = {}): GateRequestInput {
  return { method: 'GET', path: '/pets', rawQuery: '', headers: { host: 'app.test', accept: 'application/json' }, body: null, ...over }
}

const fakes: FakeSidecar[] = []

async function fakeFor(t: Test, mode?: Parameters<typeof startFakeSidecar>[0], transport: TestTransport = 'tcp'): Promise<FakeSidecar> {
  const fake = await startFakeSidecar(mode, transport)
  fakes.push(fake)
  t.teardown(() => fake.close())
  return fake
}

function coreFor(t: Test, options: Parameters<typeof createGateCore>[0]) {
  const core = createGateCore(options)
  t.teardown(() => core.close())
  return core
}

function assertErrorBody(t: Test, outcome: GateOutcome, status: number, code: string): void {
  t.equal(outcome.allowed, false, `${code}: not allowed`)
  const denied = outcome as GateDenied
  t.equal(denied.status, status, `${code}: status ${status}`)
  t.equal((denied.body as { error: string }).error, code)
  t.same(validate('gate.http.error_body.v1', denied.body), { ok: true }, `${code}: body validates against gate.http.error_body.v1`)
}

t.test('an allowed GET carries the receipt id and a request that validates against gate.http.request.v1', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const outcome = await core.decide(input({ rawQuery: 'limit=5&sort=name' }))
  t.equal(outcome.allowed, true)
  if (!outcome.allowed) return
  t.equal(outcome.gate?.verdict?.verdict, 'allow')
  t.equal(outcome.headers['x-gate-receipt-id'], outcome.gate?.receipt?.id)
  t.equal(fake.evaluations.length, 1)
  const sent = fake.evaluations[0]!.body as Record<string, unknown>
  t.same(validate('gate.http.request.v1', sent), { ok: true })
  t.match(sent.request_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'UUIDv7 request id')
  t.same(sent.query, { limit: '5', sort: 'name' })
  t.same(sent.headers, { host: 'app.test', accept: 'application/json' })
  t.equal(sent.body_hash, null)
  t.equal(sent.body_length, 0)
  t.same(sent.caller, { subject: 'anonymous', auth_method: { method: 'anonymous' }, verified: false, tenant: null, agent_id: null })
})

t.test('sidecarToken goes to /gate/evaluate as a bearer; without it no Authorization is sent', async t => {
  const fake = await fakeFor(t)
  await coreFor(t, { sidecarUrl: fake.url, sidecarToken: 'the-sidecar-control-token-01' }).decide(input())
  t.equal(fake.evaluations[0]!.headers.authorization, 'Bearer the-sidecar-control-token-01')
  await coreFor(t, { sidecarUrl: fake.url, sidecarToken: null }).decide(input({ headers: { host: 'app.test', authorization: 'Bearer caller-credential' } }))
  t.equal(fake.evaluations[1]!.headers.authorization, undefined, "the caller's own credential never goes to the sidecar")
})

t.test('a method override is refused before the sidecar is asked', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  assertErrorBody(t, await core.decide(input({ method: 'POST', headers: { host: 'app.test', 'x-http-method-override': 'DELETE' } })), 400, 'gate_bad_request')
  assertErrorBody(t, await core.decide(input({ method: 'POST', rawQuery: '_method=DELETE' })), 400, 'gate_bad_request')
  t.equal(fake.evaluations.length, 0)
})

t.test('a POST body is hashed over its bytes and the capability goes in X-Gate-Capability only', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const bytes = new TextEncoder().encode('{"name":"Rex"}')
  const token = '{"id":"cap-1","signature":"00"}'
  const outcome = await core.decide(
    input({ method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes.length), 'x-gate-capability': token }, body: bytes }),
  )
  t.equal(outcome.allowed, true)
  const call = fake.evaluations[0]!
  const sent = call.body as Record<string, unknown>
  t.same(validate('gate.http.request.v1', sent), { ok: true })
  t.equal(sent.body_hash, sha256Hex(bytes))
  t.equal(sent.body_length, bytes.length)
  t.equal(call.headers['x-gate-capability'], token)
  t.notOk(JSON.stringify(sent).includes('cap-1'), 'the token is not in the request body')
})

t.test('gate_capability in the query is sent as the header, removed from query and from what the app sees', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const token = '{"id":"cap-q"}'
  const outcome = await core.decide(input({ method: 'POST', rawQuery: `a=1&gate_capability=${encodeURIComponent(token)}&b=2` }))
  t.equal(outcome.allowed, true)
  if (!outcome.allowed) return
  t.equal(outcome.rawQuery, 'a=1&b=2')
  t.same(outcome.removeHeaders, ['x-gate-capability'], 'nor the header: the capability is for Gate alone')
  t.equal(appTarget('/pets?a=1&gate_capability=x&b=2', outcome), '/pets?a=1&b=2', 'the request target the app sees')
  t.equal(fake.evaluations[0]!.headers['x-gate-capability'], token)
  t.same((fake.evaluations[0]!.body as { query: unknown }).query, { a: '1', b: '2' })

  const both = await core.decide(input({ method: 'POST', rawQuery: 'gate_capability=fromquery', headers: { 'x-gate-capability': 'fromheader' } }))
  t.equal(both.allowed, true)
  t.equal(fake.evaluations[1]!.headers['x-gate-capability'], 'fromheader', 'the header wins')
  const unchanged = await core.decide(input({ rawQuery: 'x=1' }))
  t.equal(unchanged.allowed && unchanged.rawQuery, null, 'rawQuery is null when nothing was removed')
  if (unchanged.allowed) t.equal(appTarget('/pets?x=1', unchanged), '/pets?x=1', 'and the target stays as sent')
  const only = await core.decide(input({ rawQuery: 'gate_capability=x' }))
  if (only.allowed) t.equal(appTarget('/pets?gate_capability=x', only), '/pets', 'a query of only the capability goes whole')
})

t.test('caller identity: bearer, then x-api-key, then the cookie, then anonymous; hashes only', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, identityCookie: 'sid' })
  const secrets = { bearer: 'tok-SECRET-1', key: 'key-SECRET-2', cookie: 'cookie-SECRET-3' }
  const cases: [Record<string, string>, string, unknown][] = [
    [{ authorization: `Bearer ${secrets.bearer}`, 'x-api-key': secrets.key, cookie: `sid=${secrets.cookie}` }, `bearer:${sha256Hex(secrets.bearer).slice(0, 16)}`, { method: 'bearer', token_hash: sha256Hex(secrets.bearer) }],
    [{ 'x-api-key': secrets.key, cookie: `sid=${secrets.cookie}` }, `apikey:${sha256Hex(secrets.key).slice(0, 16)}`, { method: 'api_key', key_name: 'x-api-key', key_hash: sha256Hex(secrets.key) }],
    [{ cookie: `other=1; sid=${secrets.cookie}` }, `cookie:${sha256Hex(secrets.cookie).slice(0, 16)}`, { method: 'cookie', cookie_name: 'sid', cookie_hash: sha256Hex(secrets.cookie) }],
    [{ authorization: 'Bearer  padded', 'x-api-key': secrets.key }, `apikey:${sha256Hex(secrets.key).slice(0, 16)}`, { method: 'api_key', key_name: 'x-api-key', key_hash: sha256Hex(secrets.key) }],
    [{ authorization: 'Bearer ', 'x-api-key': 'bad\u0001key' }, 'anonymous', { method: 'anonymous' }],
    [{ authorization: 'Basic dXNlcjpwYXNz' }, 'anonymous', { method: 'anonymous' }],
  ]
  for (const [headers, subject, authMethod] of cases) {
    const before = fake.evaluations.length
    await core.decide(input({ headers }))
    const call = fake.evaluations[before]!
    const caller = (call.body as { caller: { subject: string; auth_method: unknown } }).caller
    t.equal(caller.subject, subject)
    t.same(caller.auth_method, authMethod)
    const wire = JSON.stringify(call.body) + JSON.stringify(call.headers)
    for (const s of Object.values(secrets)) t.notOk(wire.includes(s), 'no raw credential reaches the sidecar')
    t.notOk(wire.includes('dXNlcjpwYXNz'))
  }
})

t.test('the identify hook overrides the chain; an invalid identity fails closed', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, {
    sidecarUrl: fake.url,
    identify: i => (i.headers['x-tenant'] === 'bad' ? ({ subject: 42 } as never) : i.headers['x-tenant'] ? { subject: 'svc:a', auth_method: { method: 'mtls_certificate', subject_dn: 'CN=a', fingerprint: sha256Hex('cert') }, tenant: String(i.headers['x-tenant']) } : null),
  })
  await core.decide(input({ headers: { 'x-tenant': 't1', authorization: 'Bearer abc' } }))
  t.equal((fake.evaluations[0]!.body as { caller: { subject: string } }).caller.subject, 'svc:a')
  await core.decide(input({ headers: { authorization: 'Bearer abc' } }))
  t.match((fake.evaluations[1]!.body as { caller: { subject: string } }).caller.subject, /^bearer:/, 'null falls back to the chain')
  assertErrorBody(t, await core.decide(input({ headers: { 'x-tenant': 'bad' } })), 500, 'gate_evaluation_failed')
  t.equal(fake.evaluations.length, 2, 'no sidecar call for an invalid identity')
})

t.test('only allow-listed, non-credential headers are forwarded', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, forwardHeaders: ['x-request-id', 'content-type'] })
  await core.decide(input({ headers: { 'x-request-id': 'r1', 'content-type': 'text/plain', authorization: 'Bearer s', cookie: 'a=b', 'x-api-key': 'k', 'x-other': 'o' } }))
  t.same((fake.evaluations[0]!.body as { headers: unknown }).headers, { 'x-request-id': 'r1', 'content-type': 'text/plain' })
  t.throws(() => createGateCore({ forwardHeaders: ['authorization'] }), { code: 'gate_invalid_config', message: /forwardHeaders/ })
})

t.test('duplicate query key answers 400 gate_bad_request without calling the sidecar', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  for (const rawQuery of ['a=1&a=2', 'a=1&%61=2', 'gate_capability=x&gate_capability=y']) {
    assertErrorBody(t, await core.decide(input({ rawQuery })), 400, 'gate_bad_request')
  }
  t.equal(fake.evaluations.length, 0)
})

t.test('a target that is not a path (OPTIONS *, absolute-form) answers 400 without calling the sidecar', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  for (const [method, path] of [['OPTIONS', '*'], ['GET', 'http://upstream.example/pets'], ['POST', 'http://x/pets/1/adopt'], ['GET', '']]) {
    const outcome = await core.decide(input({ method, path }))
    assertErrorBody(t, outcome, 400, 'gate_bad_request')
    t.match(JSON.stringify(outcome), /origin-form/, `${method} ${path}`)
  }
  t.equal(fake.evaluations.length, 0)
})

t.test('a body over maxBodyBytes answers 413 without calling the sidecar', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, maxBodyBytes: 8 })
  const big = new Uint8Array(9)
  const declared = await core.decide(input({ method: 'POST', headers: { 'content-length': '9' }, body: big }))
  assertErrorBody(t, declared, 413, 'gate_payload_too_large')
  const streamed = await core.decide(input({ method: 'POST', headers: {}, body: new Blob([big]).stream() }))
  assertErrorBody(t, streamed, 413, 'gate_payload_too_large')
  t.equal(fake.evaluations.length, 0)
})

for (const transport of ['tcp', 'unix'] as const) {
  t.test(`sidecar failures map to 503, 504 and 502, fail closed (${transport})`, async t => {
    const down = coreFor(t, { sidecarUrl: await unreachableSidecarUrl(transport), sidecarPublicKey: 'a'.repeat(64) })
    assertErrorBody(t, await down.decide(input()), 503, 'gate_sidecar_unreachable')

    for (const mode of ['hang', 'stall-body'] as const) {
      const fake = await fakeFor(t, mode, transport)
      const core = coreFor(t, { sidecarUrl: fake.url, timeoutMs: 150 })
      assertErrorBody(t, await core.decide(input()), 504, 'gate_timeout')
    }
    for (const mode of ['status-500', 'invalid-json', 'schema-violation', 'huge-answer'] as const) {
      const fake = await fakeFor(t, mode, transport)
      const core = coreFor(t, { sidecarUrl: fake.url })
      assertErrorBody(t, await core.decide(input()), 502, 'gate_evaluation_failed')
    }
  })
}

t.test('receipts that do not verify or bind answer 502 gate_invalid_receipt', async t => {
  for (const mode of ['impostor', 'other-request', 'other-content'] as const) {
    const fake = await fakeFor(t, mode)
    const core = coreFor(t, { sidecarUrl: fake.url })
    const outcome = await core.decide(input({ method: 'POST', headers: { 'x-gate-capability': '{}' } }))
    assertErrorBody(t, outcome, 502, 'gate_invalid_receipt')
    t.notOk('x-gate-receipt-id' in outcome.headers, `${mode}: an unverified receipt id is not repeated`)
  }
  const fake = await fakeFor(t, 'impostor')
  const viaSidecar = coreFor(t, { sidecarUrl: fake.url, verifyReceipts: 'sidecar' })
  assertErrorBody(t, await viaSidecar.decide(input()), 502, 'gate_invalid_receipt')
  t.ok(fake.calls.some(c => c.path === '/gate/verify'), 'verifyReceipts sidecar asks /gate/verify')
})

t.test('a receipt is checked over the bytes received: a forgery fails however it is written, a genuine receipt passes however it is written', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const receiptOf = (answer: string) => {
    const members = jsonObjectMembers(answer)!
    const m = members.find(x => x.key === 'receipt')!
    return { text: answer.slice(m.valueStart, m.end), before: answer.slice(0, m.valueStart), after: answer.slice(m.end) }
  }
  const forge = (receiptText: string) => receiptText.replace('"response_status":200', '"response_status":201')
  const cases: [string, (answer: string) => string, boolean][] = [
    ['as sent (canonical)', a => a, true],
    ['the receipt pretty-printed', a => {
      const r = receiptOf(a)
      return r.before + JSON.stringify(JSON.parse(r.text), null, 2) + r.after
    }, true],
    ['a signed member changed, still canonical', a => {
      const r = receiptOf(a)
      return r.before + forge(r.text) + r.after
    }, false],
    ['a genuine receipt, then a forged one under the same name (JSON.parse keeps the last)', a => {
      const r = receiptOf(a)
      return `${a.slice(0, -1)},"receipt":${forge(r.text)}}`
    }, false],
    ['a forged receipt under an escaped name, before the genuine one', a => `{"rec\\u0065ipt":${forge(receiptOf(a).text)},${a.slice(1)}`, true],
    ['the genuine receipt, then a forged one under an escaped name', a => `${a.slice(0, -1)},"rec\\u0065ipt":${forge(receiptOf(a).text)}}`, false],
  ]
  for (const [what, rewrite, allowed] of cases) {
    fake.rewrite = rewrite
    const outcome = await core.decide(input())
    if (allowed) t.equal(outcome.allowed, true, what)
    else assertErrorBody(t, outcome, 502, 'gate_invalid_receipt')
  }
  fake.rewrite = undefined
})

t.test('with the event loop busy, receipts are checked off the thread and still fail closed', async t => {
  const genuine = await fakeFor(t)
  const impostor = await fakeFor(t, 'impostor')
  const good = coreFor(t, { sidecarUrl: genuine.url })
  const bad = coreFor(t, { sidecarUrl: impostor.url })
  await good.decide(input())
  await bad.decide(input())
  // hold the loop for most of the next measuring windows (100 ms each), so it counts as busy
  for (let round = 0; round < 3; round++) {
    const end = performance.now() + 150
    while (performance.now() < end) {
      // busy
    }
    const [allowed, forged] = await Promise.all([good.decide(input()), bad.decide(input())])
    t.equal(allowed.allowed, true, `round ${round}: a genuine receipt passes`)
    assertErrorBody(t, forged, 502, 'gate_invalid_receipt')
  }
})

t.test('a platform receipt check decides; one that throws fails closed', async t => {
  const fake = await fakeFor(t)
  const seen: unknown[] = []
  const on = (checkReceipt: (receipt: unknown, keys: readonly string[]) => ReturnType<typeof checkHttpReceipt> | Promise<ReturnType<typeof checkHttpReceipt>>) => {
    const core = createGateCoreOn({ createTransport: o => createUndiciTransport(o.sidecarUrl, o), check: validate, checkReceipt }, { sidecarUrl: fake.url })
    t.teardown(() => core.close())
    return core
  }
  const passing = on(async (receipt, keys) => {
    seen.push(receipt)
    return checkHttpReceipt(receipt, { trustedKeys: keys })
  })
  t.equal((await passing.decide(input())).allowed, true)
  t.equal(seen.length, 1, 'the platform check saw the receipt')
  const refusing = on(receipt => ({ ...checkHttpReceipt(receipt, { trustedKeys: [] }), failedStep: 'signature', detail: 'refused by the platform' }))
  assertErrorBody(t, await refusing.decide(input()), 502, 'gate_invalid_receipt')
  const throwing = on(() => Promise.reject(new Error('verifier crashed')))
  const outcome = await throwing.decide(input())
  assertErrorBody(t, outcome, 502, 'gate_invalid_receipt')
  t.match(((outcome as GateDenied).body as { message: string }).message, 'verifier crashed')
})

t.test('verifyReceipts sidecar: /gate/verify answering 404, 408, 429 or 5xx is 503 gate_sidecar_unavailable; other failures 502', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, verifyReceipts: 'sidecar' })
  for (const status of [404, 408, 429, 500, 503]) {
    fake.verifyStatus = status
    const outcome = await core.decide(input())
    assertErrorBody(t, outcome, 503, 'gate_sidecar_unavailable')
    t.match((outcome as GateDenied).body, { suggestion: /retry later/ }, `${status}: says to retry`)
    t.notOk('x-gate-receipt-id' in outcome.headers, `${status}: an unconfirmed receipt id is not repeated`)
  }
  fake.verifyStatus = 400
  assertErrorBody(t, await core.decide(input()), 502, 'gate_evaluation_failed')
  fake.verifyStatus = undefined
  t.equal((await core.decide(input())).allowed, true, 'confirmed again once /gate/verify answers')
})

t.test('fail-open passes only unreachable and timeout, and says so in X-Gate-Fail-Open', async t => {
  const down = coreFor(t, { sidecarUrl: await closedPortUrl(), onSidecarError: 'allow', sidecarPublicKey: 'a'.repeat(64) })
  const passed = await down.decide(input({ method: 'POST', rawQuery: 'gate_capability=x' }))
  t.equal(passed.allowed, true)
  t.same(passed.headers, { 'x-gate-fail-open': 'gate_sidecar_unreachable' })
  if (passed.allowed) {
    t.equal(passed.gate?.failOpen, 'gate_sidecar_unreachable')
    t.equal(passed.gate?.verdict, null)
    t.equal(passed.rawQuery, '', 'the token is still removed')
  }
  const hang = await fakeFor(t, 'hang')
  const slow = coreFor(t, { sidecarUrl: hang.url, onSidecarError: 'allow', timeoutMs: 100, sidecarPublicKey: 'a'.repeat(64) })
  t.same((await slow.decide(input())).headers, { 'x-gate-fail-open': 'gate_timeout' })
  for (const mode of ['impostor', 'status-500'] as const) {
    const fake = await fakeFor(t, mode)
    const core = coreFor(t, { sidecarUrl: fake.url, onSidecarError: 'allow' })
    t.equal((await core.decide(input())).allowed, false, `${mode} is never passed open`)
  }
  const liveHangs = await fakeFor(t, 'hang-live')
  const answeredDeny = coreFor(t, { sidecarUrl: liveHangs.url, onSidecarError: 'allow', timeoutMs: 150 })
  assertErrorBody(t, await answeredDeny.decide(input({ method: 'POST' })), 504, 'gate_timeout')
  t.equal(liveHangs.evaluations.length, 1, 'the sidecar answered (a deny): a key fetch timing out afterwards is not passed open')
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, onSidecarError: 'allow', maxBodyBytes: 1 })
  assertErrorBody(t, await core.decide(input({ method: 'POST', headers: { 'content-length': '2' }, body: new Uint8Array(2) })), 413, 'gate_payload_too_large')
})

t.test('verdicts: deny 403, approval 409, cancel 500, incomplete 428, each with the receipt id', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const denied = await core.decide(input({ method: 'POST' }))
  assertErrorBody(t, denied, 403, 'gate_access_denied')
  const body = (denied as GateDenied).body as Record<string, unknown>
  t.equal(body.receipt_id, denied.headers['x-gate-receipt-id'])
  t.match(body.suggestion, /X-Gate-Capability/)

  fake.mode = 'approval'
  const approval = await core.decide(input({ method: 'POST', path: '/pets/1/adopt' }))
  assertErrorBody(t, approval, 409, 'gate_approval_required')
  t.match((approval as GateDenied).body, { kernel_receipt_id: approval.headers['x-gate-receipt-id'], approval_id: 'a1b2c3', resume_path: '/approvals/a1b2c3/respond' })

  fake.mode = 'cancel'
  const cancel = (await core.decide(input())) as GateDenied
  t.equal(cancel.status, 500)
  t.same(validate('gate.http.evaluate_response.v1', cancel.body), { ok: true }, 'cancel body is the evaluate response')
  t.equal(cancel.headers['x-gate-receipt-id'], (cancel.body as { receipt: { id: string } }).receipt.id)

  fake.mode = 'incomplete'
  const incomplete = (await core.decide(input({ method: 'POST', headers: { 'x-gate-capability': '{}' } }))) as GateDenied
  t.equal(incomplete.status, 428)
  const nonce = (incomplete.body as { execution_nonce: { nonce_id: string; request_id: string } }).execution_nonce
  t.ok(nonce.nonce_id)

  fake.mode = 'honest'
  const retry = await core.decide(input({ method: 'POST', headers: { 'x-gate-capability': '{}', 'x-gate-execution-nonce': nonce.nonce_id } }))
  t.equal(retry.allowed, true, 'a strict-nonce retry whose receipt reuses the bound request id is accepted')
  t.equal(retry.allowed && retry.gate?.receipt?.request_id, nonce.request_id)
  assertErrorBody(t, await core.decide(input({ headers: { 'x-gate-execution-nonce': 'nope' } })), 400, 'gate_bad_request')
})

t.test('the signer key is read once from /gate/live, shared by concurrent first requests', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url })
  const outcomes = await Promise.all(Array.from({ length: 20 }, () => core.decide(input())))
  t.ok(outcomes.every(o => o.allowed))
  await core.decide(input())
  t.equal(fake.liveCalls, 1)
  const pinned = coreFor(t, { sidecarUrl: fake.url, sidecarPublicKey: fake.signer.publicKey })
  t.equal((await pinned.decide(input())).allowed, true)
  t.equal(fake.liveCalls, 1, 'a pinned key needs no /gate/live')
  const wrongPin = coreFor(t, { sidecarUrl: fake.url, sidecarPublicKey: 'b'.repeat(64) })
  assertErrorBody(t, await wrongPin.decide(input()), 502, 'gate_invalid_receipt')
  const off = coreFor(t, { sidecarUrl: fake.url, sidecarPublicKey: 'b'.repeat(64), verifyReceipts: 'off' })
  t.equal((await off.decide(input())).allowed, true, 'verifyReceipts off skips the signature (bindings still checked)')
})

t.test('skip paths bypass Gate entirely', async t => {
  const fake = await fakeFor(t)
  const core = coreFor(t, { sidecarUrl: fake.url, skip: ['/healthz', /^\/public\//] })
  for (const path of ['/healthz', '/public/logo.png']) {
    const outcome = await core.decide(input({ method: 'POST', path }))
    t.same(outcome, { allowed: true, headers: {}, gate: null, body: null, rawQuery: null, removeHeaders: [] }, 'nothing to remove either')
  }
  t.equal(fake.evaluations.length, 0)
})

t.test('unsupported methods answer 405 gate_bad_request', async t => {
  const core = coreFor(t, { sidecarUrl: await closedPortUrl() })
  assertErrorBody(t, await core.decide(input({ method: 'TRACE' })), 405, 'gate_bad_request')
})

t.test('against the real gate sidecar', { skip: hasSidecarBuild() ? false : `no sidecar build at ${GATE_CLI}` }, async t => {
  const sidecar = await startSidecarProcess({ dir: t.testdir() })
  t.teardown(() => sidecar.stop())

  await t.test('an approval-gated route answers 409 with the approval handle', async t => {
    const core = coreFor(t, { sidecarUrl: sidecar.url })
    const { token } = await sidecar.issue(['POST /pets/{id}/adopt'])
    const outcome = await core.decide(input({ method: 'POST', path: '/pets/7/adopt', headers: { 'x-gate-capability': token } }))
    assertErrorBody(t, outcome, 409, 'gate_approval_required')
    const body = (outcome as GateDenied).body as Record<string, string>
    t.equal(body.kernel_receipt_id, outcome.headers['x-gate-receipt-id'])
    t.match(body.resume_path, new RegExp(`^/approvals/${body.approval_id}/respond$`))
  })

  await t.test('verifyReceipts sidecar confirms each receipt through /gate/verify', async t => {
    const core = coreFor(t, { sidecarUrl: sidecar.url, verifyReceipts: 'sidecar' })
    const outcome = await core.decide(input({ path: '/pets/3', rawQuery: 'x=1' }))
    t.equal(outcome.allowed, true)
    t.equal(outcome.allowed && outcome.gate?.receipt?.route_pattern, '/pets/{id}')
  })

  await t.test('the real sidecar sends each receipt in its canonical form, which is checked over those bytes', async t => {
    for (const [method, path, headers] of [
      ['GET', '/pets', {}],
      ['POST', '/pets', {}],
      ['POST', '/pets', { 'x-gate-capability': Buffer.from((await sidecar.issue(['POST /pets'])).token).toString('base64url') }],
    ] as [string, string, Record<string, string>][]) {
      const request = { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) }
      const res = await call(sidecar.url, 'POST', '/gate/evaluate', { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(request) })
      const m = jsonObjectMembers(res.text)!.find(x => x.key === 'receipt')!
      const text = res.text.slice(m.valueStart, m.end)
      t.ok(isCanonicalJsonText(text), `${method} ${path}: canonical`)
      t.equal(canonicalJson(JSON.parse(text)), text, `${method} ${path}: re-canonicalizing gives the same bytes`)
      const key = (await call(sidecar.url, 'GET', '/gate/live')).json.kernel_key as string
      t.same(checkHttpReceipt(res.json.receipt, { trustedKeys: [key], receiptText: text }), checkHttpReceipt(res.json.receipt, { trustedKeys: [key] }), `${method} ${path}: the same answer both ways`)
      t.equal(checkHttpReceipt(res.json.receipt, { trustedKeys: [key], receiptText: text }).response.ok, true)
    }
  })

  await t.test('a capability in the query is honoured by the real sidecar', async t => {
    const core = coreFor(t, { sidecarUrl: sidecar.url })
    const { token } = await sidecar.issue(['POST /pets'])
    const body = new TextEncoder().encode('{"name":"Rex"}')
    const outcome = await core.decide(input({ method: 'POST', rawQuery: `gate_capability=${encodeURIComponent(token)}`, headers: { 'content-length': String(body.length) }, body }))
    t.equal(outcome.allowed, true)
    t.equal(outcome.allowed && outcome.gate?.receipt?.capability_id, JSON.parse(token).id)
  })
})

t.test('every request the core sent validated against gate.http.request.v1 at the fake sidecar', async t => {
  const sent = fakes.reduce((n, f) => n + f.evaluations.length, 0)
  t.ok(sent > 40, `${sent} evaluate requests captured`)
  t.same(fakes.flatMap(f => f.invalidRequests), [])
})
