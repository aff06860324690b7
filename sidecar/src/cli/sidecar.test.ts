// End-to-end: the real `gate sidecar` process on a free port, a real spec and a real SQLite file.
// Every response received is validated against schemas/v1.
import t, { type Test } from 'tap'
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ANONYMOUS_CALLER, createSigner, generateSecret, uuidv7, verifyHttpReceipt, type HttpReceipt } from '@gate/sdk'
import { delegatedChild, widenedDelegation } from '@gate/sdk/testing'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call as callSocket } from '@gate/sdk/middleware-testing'
import { call, schemaErrors, sendRawRequest } from '../testing/http-client.js'

const TOKEN = 'test-control-token-' + 'x'.repeat(16)
const agentKey = createSigner({ secret: generateSecret() }).publicKey

function request(method: string, path: string, extra: Record<string, unknown> = {}) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000), ...extra }
}

async function start(t: Test, extraArgs: string[] = [], env: Record<string, string> = { GATE_CONTROL_TOKEN: TOKEN }) {
  const { dir, spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...extraArgs], { env })
  t.teardown(() => gate.stop('SIGKILL'))
  return { gate, dir, spec, seed, db }
}

async function evaluate(gate: GateProcess, body: unknown, headers: Record<string, string | string[]> = {}) {
  const r = await call(`${gate.url}/gate/evaluate`, { body, headers })
  return r
}

async function issue(gate: GateProcess, grants: unknown[]) {
  const r = await call(`${gate.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: agentKey, scope: { grants }, ttlSeconds: 3600 },
    headers: { authorization: `Bearer ${TOKEN}` },
  })
  if (r.status !== 200) throw new Error(`issue failed: ${r.status} ${r.text}`)
  const capability = (r.body as { capability: Record<string, unknown> }).capability
  return { capability, header: Buffer.from(JSON.stringify(capability)).toString('base64url') }
}

t.test('refuses to start without durable receipts (exit 1, spec message)', async t => {
  for (const args of [['sidecar'], ['sidecar', '--receipt-store', ':memory:'], ['sidecar', '--receipt-db', 'file::memory:?cache=shared']]) {
    const r = await runGate([...args, '--listen', '127.0.0.1:0'])
    t.equal(r.code, 1, args.join(' '))
    t.match(r.stderr, /refuses? to start without durable receipts|refusing to start without durable receipts/)
  }
})

t.test('usage errors exit 2; --help describes every flag', async t => {
  const bad = await runGate(['sidecar', '--no-such-flag'])
  t.equal(bad.code, 2)
  const help = await runGate(['sidecar', '--help'])
  t.equal(help.code, 0)
  for (const flag of ['--spec', '--listen', '--receipt-store', '--allow-ephemeral-receipts', '--authority-seed-file', '--receipt-db', '--revocation-db', '--budget-db', '--control-url', '--control-token']) {
    t.match(help.stdout, flag)
  }
  const top = await runGate(['--help'])
  t.equal(top.code, 0)
  t.match(top.stdout, /sidecar/)
})

t.test('live and health answer per spec and validate', async t => {
  const { gate } = await start(t)
  const live = await call(`${gate.url}/gate/live`)
  t.equal(live.status, 200)
  t.same(schemaErrors('gate.http.health.v1', live.body), [])
  t.match(live.body, { status: 'healthy', receipt_backend: '', revocation_backend: '' })
  t.match((live.body as { kernel_key: string }).kernel_key, /^[0-9a-f]{64}$/)
  const health = await call(`${gate.url}/gate/health`)
  t.equal(health.status, 200)
  t.same(schemaErrors('gate.http.health.v1', health.body), [])
  t.match(health.body, { status: 'healthy', receipt_backend: 'durable', revocation_backend: 'durable' })
  t.match(gate.output(), /routes/)
  t.match(gate.output(), /signer public key: [0-9a-f]{64}/)
})

t.test('verdict rows reachable without the proxy, each receipt verifying', async t => {
  const { gate } = await start(t)
  const kernelKey = ((await call(`${gate.url}/gate/live`)).body as { kernel_key: string }).kernel_key
  const { header } = await issue(gate, [{ server_id: 'http', tool_name: '*' }])
  const rows: [string, string, string, Record<string, string>, string, number][] = [
    ['safe GET', 'GET', '/pets', {}, 'allow', 200],
    ['POST without token', 'POST', '/pets', {}, 'deny', 403],
    ['POST with issued token', 'POST', '/pets', { 'x-gate-capability': header }, 'allow', 200],
    ['side-effects false', 'POST', '/pets/search', {}, 'allow', 200],
    ['side-effects true', 'GET', '/admin/export', {}, 'deny', 403],
    ['unmatched GET', 'GET', '/elsewhere', {}, 'allow', 200],
    ['unmatched DELETE', 'DELETE', '/elsewhere', {}, 'deny', 403],
    ['invalid token', 'POST', '/pets', { 'x-gate-capability': 'garbage' }, 'deny', 403],
    ['approval route', 'POST', '/pets/1/adopt', { 'x-gate-capability': header }, 'deny', 409],
  ]
  for (const [name, method, path, headers, verdict, status] of rows) {
    const r = await evaluate(gate, request(method, path), headers)
    t.equal(r.status, 200, `${name}: evaluate answers 200`)
    t.same(schemaErrors('gate.http.evaluate_response.v1', r.body), [], `${name}: schema`)
    const body = r.body as { verdict: { verdict: string }; receipt: HttpReceipt }
    t.equal(body.verdict.verdict, verdict, name)
    t.equal(body.receipt.response_status, status, `${name}: response_status`)
    t.equal(r.headers['x-gate-receipt-id'], body.receipt.id)
    t.ok(verifyHttpReceipt(body.receipt, { trustedKeys: [kernelKey] }).ok, `${name}: verifies offline`)
    const v = await call(`${gate.url}/gate/verify`, { body: body.receipt })
    t.equal(v.status, 200)
    t.same(schemaErrors('gate.http.verify_response.v1', v.body), [])
    t.match(v.body, { ok: true, signer_trusted: true }, `${name}: verifies via /gate/verify`)
  }
})

t.test('issue 23: a delegated child wider than its link is denied DELETE /pets/1 with a reason code; a narrower one is allowed', async t => {
  const authority = createSigner({ secret: generateSecret() })
  const agentB = createSigner({ secret: generateSecret() })
  const { gate } = await start(t, ['--trusted-issuer', authority.publicKey])
  const now = Math.floor(Date.now() / 1000)
  const header = (token: unknown) => ({ 'x-gate-capability': Buffer.from(JSON.stringify(token)).toString('base64url') })
  const widened = widenedDelegation({ authority, delegatee: agentB, subject: agentKey, now })
  const denied = await evaluate(gate, request('DELETE', '/pets/1'), header(widened))
  t.equal(denied.status, 200)
  t.match(denied.body, { verdict: { verdict: 'deny', guard: 'CapabilityGuard', details: { reason_code: 'capability_attenuation_unproven' } }, receipt: { capability_id: null, metadata: { gate_presented_capability: { capability_id: widened.id, verified: false } } } })
  const child = delegatedChild({
    signers: [authority, agentB],
    delegated: [{ scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/*' }] }, expires_at: now + 600 }],
    child: { scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, expires_at: now + 300 },
    subject: agentKey,
    now,
  })
  t.match((await evaluate(gate, request('POST', '/pets'), header(child))).body, { verdict: { verdict: 'allow' } })
  t.match((await evaluate(gate, request('DELETE', '/pets/1'), header(child))).body, { verdict: { verdict: 'deny', details: { reason_code: 'scope_mismatch' } } })
})

t.test('a charged cost is on the receipt, and the receipt query finds it by minCost / maxCost', async t => {
  const { gate } = await start(t)
  const { header } = await issue(gate, [{ server_id: 'http', tool_name: 'PATCH /pets/{id}', max_total_cost: { units: 1000, currency: 'USD' } }])
  const charged = await evaluate(gate, request('PATCH', '/pets/1', { governed_intent: { max_amount: { units: 450, currency: 'USD' } } }), { 'x-gate-capability': header })
  t.match(charged.body, { verdict: { verdict: 'allow' }, receipt: { metadata: { financial: { cost_charged: 450, currency: 'USD', budget_total: 1000, budget_remaining: 550 } } } })
  const over = await evaluate(gate, request('PATCH', '/pets/2', { governed_intent: { max_amount: { units: 501, currency: 'USD' } } }), { 'x-gate-capability': header })
  t.match(over.body, { verdict: { verdict: 'deny', details: { reason_code: 'budget_limit_exceeded' } } }, 'the route limit of the pets spec is 500')
  const query = (params: string) => call(`${gate.url}/v1/receipts/query?${params}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  const found = await query('minCost=400&maxCost=500&costCurrency=USD')
  t.match(found.body, { totalCount: 1, receipts: [{ tool_name: 'PATCH /pets/{id}', metadata: { financial: { cost_charged: 450 } } }] })
  t.match((await query('minCost=451&costCurrency=USD')).body, { totalCount: 0 }, 'the refused cost was not charged')
})

t.test('x-gate-sensitivity restricted: a valid token still needs an approval for each call', async t => {
  const { gate } = await start(t)
  const { header } = await issue(gate, [{ server_id: 'http', tool_name: '*' }])
  const r = await evaluate(gate, request('DELETE', '/pets/1'), { 'x-gate-capability': header })
  t.match(r.body, { verdict: { verdict: 'deny', guard: 'ApprovalGuard', http_status: 409 }, approval: { approval_id: /^[0-9a-f]+$/ } })
})

t.test('every error code and body of spec 02', async t => {
  const { gate } = await start(t)
  const cases: [string, () => Promise<Awaited<ReturnType<typeof call>>>, number, string][] = [
    ['malformed JSON', () => call(`${gate.url}/gate/evaluate`, { rawBody: '{"request_id":', headers: { 'content-type': 'application/json' } }), 400, 'gate_bad_request'],
    ['schema violation: wrong type', () => evaluate(gate, { ...request('GET', '/pets'), timestamp: 'now' }), 400, 'gate_bad_request'],
    ['schema violation: unknown method', () => evaluate(gate, request('TRACE', '/pets')), 400, 'gate_bad_request'],
    ['schema violation: missing caller', () => evaluate(gate, { ...request('GET', '/pets'), caller: undefined }), 400, 'gate_bad_request'],
    ['an empty path', () => evaluate(gate, request('GET', '')), 400, 'gate_bad_request'],
    ['a path that is not origin-form', () => evaluate(gate, request('GET', 'pets')), 400, 'gate_bad_request'],
    ['a lone surrogate', () => call(`${gate.url}/gate/evaluate`, { rawBody: JSON.stringify(request('GET', '/pets')).replace('"/pets"', '"/pets\\ud800"'), headers: { 'content-type': 'application/json' } }), 400, 'gate_bad_request'],
    ['duplicate query key', () => call(`${gate.url}/gate/evaluate`, { rawBody: JSON.stringify(request('GET', '/pets')).replace(/}$/, ',"query":{"a":"1","a":"2"}}'), headers: { 'content-type': 'application/json' } }), 400, 'gate_bad_request'],
    ['blank nonce header', () => evaluate(gate, request('POST', '/pets'), { 'x-gate-execution-nonce': ' ' }), 400, 'gate_bad_request'],
    ['malformed nonce header', () => evaluate(gate, request('POST', '/pets'), { 'x-gate-execution-nonce': 'zz' }), 400, 'gate_bad_request'],
    ['a capability header on two field lines', () => evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': ['e30', 'e30'] }), 400, 'gate_bad_request'],
    ['a nonce header on two field lines', () => evaluate(gate, request('POST', '/pets'), { 'x-gate-execution-nonce': ['0'.repeat(32), '0'.repeat(32)] }), 400, 'gate_bad_request'],
    ['blank approval id header', () => evaluate(gate, request('POST', '/pets'), { 'x-gate-approval-id': '' }), 400, 'gate_bad_request'],
    ['evaluate body over 10 MiB', () => call(`${gate.url}/gate/evaluate`, { rawBody: Buffer.alloc(10 * 1024 * 1024 + 1, 0x20), headers: { 'content-type': 'application/json' } }), 400, 'gate_bad_request'],
    ['verify body not a receipt', () => call(`${gate.url}/gate/verify`, { body: { hello: 'world' } }), 400, 'gate_bad_request'],
    ['verify body over 1 MiB', () => call(`${gate.url}/gate/verify`, { rawBody: Buffer.alloc(1024 * 1024 + 1, 0x20), headers: { 'content-type': 'application/json' } }), 400, 'gate_bad_request'],
    ['unknown route', () => call(`${gate.url}/gate/nope`), 404, 'gate_not_found'],
    ['wrong method', () => call(`${gate.url}/gate/evaluate`, { method: 'GET' }), 405, 'gate_method_not_allowed'],
  ]
  for (const [name, fn, status, code] of cases) {
    const r = await fn()
    t.equal(r.status, status, name)
    t.match(r.body, { error: code }, name)
    t.same(schemaErrors('gate.http.error_body.v1', r.body), [], `${name}: error body schema`)
    t.type((r.body as { message: string }).message, 'string')
  }
  // hostile header sizes are refused by the HTTP layer, and the process keeps serving
  const huge = await sendRawRequest(gate.url, ['GET /gate/live HTTP/1.1', `x-junk: ${'a'.repeat(64 * 1024)}`])
  t.equal(huge.status, 431, 'oversized headers refused')
  t.equal((await call(`${gate.url}/gate/live`)).status, 200)
})

t.test('issue → use → revoke → denied', async t => {
  const { gate } = await start(t)
  const { capability, header } = await issue(gate, [{ server_id: 'http', tool_name: 'POST /pets' }])
  t.same(schemaErrors('gate.capability.v1', capability), [])
  const ok = await evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })
  t.match(ok.body, { verdict: { verdict: 'allow' } })
  const byId = await evaluate(gate, request('POST', '/pets', { capability_id: capability.id }), { authorization: `Bearer ${TOKEN}` })
  t.match(byId.body, { verdict: { verdict: 'allow' } }, 'capability_id naming an issued token, from a caller with the control token')
  const rv = await call(`${gate.url}/v1/revocations`, { body: { capabilityId: capability.id }, headers: { authorization: `Bearer ${TOKEN}` } })
  t.same(rv.body, { capabilityId: capability.id, revoked: true, newlyRevoked: true })
  const again = await call(`${gate.url}/v1/revocations`, { body: { capabilityId: capability.id }, headers: { authorization: `Bearer ${TOKEN}` } })
  t.same(again.body, { capabilityId: capability.id, revoked: true, newlyRevoked: false })
  const denied = await evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })
  t.match(denied.body, { verdict: { verdict: 'deny', guard: 'RevocationGuard' } })
  t.match((denied.body as { verdict: { reason: string } }).verdict.reason, /revoked/)
})

t.test('control routes need the bearer token (constant 401 for absent and unknown)', async t => {
  const { gate } = await start(t)
  const body = { subjectPublicKey: agentKey, scope: { grants: [] }, ttlSeconds: 60 }
  const absent = await call(`${gate.url}/v1/capabilities/issue`, { body })
  const wrong = await call(`${gate.url}/v1/capabilities/issue`, { body, headers: { authorization: 'Bearer nope' } })
  t.equal(absent.status, 401)
  t.equal(wrong.status, 401)
  t.same(absent.body, wrong.body)
  t.equal(absent.headers['www-authenticate'], 'Bearer')
  const bad = await call(`${gate.url}/v1/capabilities/issue`, { body: { ...body, ttlSeconds: -1 }, headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(bad.status, 400)
  t.match(bad.body, { error: /ttlSeconds/ })
  t.equal((await call(`${gate.url}/approvals`)).status, 401)
})

t.test('--listen unix:PATH: a 0600 socket that evaluates, keeps the control routes behind the token, and goes on SIGTERM', async t => {
  const { spec, seed, db } = await gateFiles(t)
  // a short directory: t.testdir() paths can exceed the 107 bytes a socket path may have
  const dir = mkdtempSync(join(tmpdir(), 'gate-sidecar-unix-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'gate.sock')
  const gate = await spawnGate(['sidecar', '--listen', `unix:${path}`, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => gate.stop('SIGKILL'))
  t.equal(gate.url, `unix:${path}`)
  t.equal((lstatSync(path).mode & 0o777).toString(8), '600')
  const live = await callSocket(gate.url, 'GET', '/gate/live')
  t.equal(live.status, 200)
  const evaluated = await callSocket(gate.url, 'POST', '/gate/evaluate', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request('GET', '/pets')) })
  t.equal(evaluated.status, 200)
  t.ok(verifyHttpReceipt(evaluated.json.receipt, { trustedKeys: [live.json.kernel_key] }).ok, 'the receipt verifies')
  // the socket is no identity either (docs/security.md): without a configured token one is created
  t.equal((await callSocket(gate.url, 'GET', '/approvals')).status, 401, 'the control routes need the token on the socket too')
  const tokenFile = join(dirname(db), 'control-token')
  t.match(gate.output(), `bearer token in ${tokenFile} (created now, mode 0600)`)
  const token = readFileSync(tokenFile, 'utf8').trim()
  t.equal((await callSocket(gate.url, 'GET', '/approvals', { headers: { authorization: `Bearer ${token}` } })).status, 200, 'with it, the socket\'s callers reach them')
  t.equal(await gate.stop('SIGTERM'), 0)
  t.notOk(existsSync(path), 'the socket is removed on shutdown')

  t.equal((await runGate(['sidecar', '--listen', 'unix:relative.sock', '--allow-ephemeral-receipts'])).code, 2, 'a relative socket path is a usage error')
})

t.test('max_invocations exhausted across concurrent requests', async t => {
  const { gate } = await start(t)
  const { header } = await issue(gate, [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 3 }])
  const results = await Promise.all(Array.from({ length: 8 }, () => evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })))
  const verdicts = results.map(r => (r.body as { verdict: { verdict: string } }).verdict.verdict)
  t.equal(verdicts.filter(v => v === 'allow').length, 3)
  t.equal(verdicts.filter(v => v === 'deny').length, 5)
})

t.test('approval pending → approved → allowed once → second use denied, every transition signed', async t => {
  const { gate } = await start(t)
  const { header } = await issue(gate, [{ server_id: 'http', tool_name: '*' }])
  const auth = { authorization: `Bearer ${TOKEN}` }
  const req = request('POST', '/pets/7/adopt', { body_hash: 'c'.repeat(64), body_length: 10 })
  const pending = await evaluate(gate, req, { 'x-gate-capability': header })
  const approval = (pending.body as { approval: { approval_id: string; resume_path: string } }).approval
  t.match(pending.body, { verdict: { verdict: 'deny', guard: 'ApprovalGuard', http_status: 409 } })
  t.equal(approval.resume_path, `/approvals/${approval.approval_id}/respond`)
  const list = await call(`${gate.url}/approvals`, { headers: auth })
  t.ok((list.body as { approvals: { approvalId: string }[] }).approvals.some(a => a.approvalId === approval.approval_id))
  const respond = await call(`${gate.url}${approval.resume_path}`, { body: { decision: 'approve', responder: 'alice' }, headers: auth })
  t.equal(respond.status, 200)
  const transitionReceipt = (respond.body as { receipt_id: string }).receipt_id
  t.match(transitionReceipt, /^[0-9a-f]{64}$/)
  const twice = await call(`${gate.url}${approval.resume_path}`, { body: { decision: 'deny' }, headers: auth })
  t.equal(twice.status, 409)
  const retry = { ...req, request_id: uuidv7() }
  const allowed = await evaluate(gate, retry, { 'x-gate-capability': header, 'x-gate-approval-id': approval.approval_id })
  t.match(allowed.body, { verdict: { verdict: 'allow' } })
  const second = await evaluate(gate, { ...req, request_id: uuidv7() }, { 'x-gate-capability': header, 'x-gate-approval-id': approval.approval_id })
  t.match(second.body, { verdict: { verdict: 'deny' } })
  const unknown = await call(`${gate.url}/approvals/nope/respond`, { body: { decision: 'approve' }, headers: auth })
  t.equal(unknown.status, 404)
})

t.test('control routes: bad input gets a clear 400 or 401 and changes nothing', async t => {
  const { gate } = await start(t)
  const auth = { authorization: `Bearer ${TOKEN}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const { capability, header } = await issue(gate, [{ server_id: 'http', tool_name: '*' }])
  const pending = await evaluate(gate, request('POST', '/pets/7/adopt', { body_hash: 'd'.repeat(64), body_length: 3 }), { 'x-gate-capability': header })
  const approvalId = (pending.body as { approval: { approval_id: string } }).approval.approval_id
  const receiptCount = async () => ((await call(`${gate.url}/v1/receipts/query?limit=1`, { headers: auth })).body as { totalCount: number }).totalCount
  const before = await receiptCount()

  const routes: [string, number, unknown][] = [
    ['/v1/capabilities/issue', 64 * 1024, { subjectPublicKey: 5, scope: 'all', ttlSeconds: '60' }],
    ['/v1/revocations', 64 * 1024, { capabilityId: 7 }],
    [`/approvals/${approvalId}/respond`, 16 * 1024, { decision: 3 }],
    ['/v1/receipts/tools', 1024 * 1024, { id: 1, signature: [], kernel_key: {} }],
    ['/v1/receipts/children', 1024 * 1024, { session_id: 5 }],
  ]
  for (const [route, limit, wrongTypes] of routes) {
    const cases: [string, string | Buffer][] = [
      ['malformed JSON', '{"capabilityId":'],
      ['empty body', ''],
      ['an array', '[1,2]'],
      ['wrong types', JSON.stringify(wrongTypes)],
      [`a body over ${limit} bytes`, Buffer.alloc(limit + 1, 0x20)],
    ]
    for (const [what, rawBody] of cases) {
      const r = await call(`${gate.url}${route}`, { rawBody, headers: json })
      t.equal(r.status, 400, `${route}, ${what}: 400`)
      t.match(r.headers['content-type'], /^application\/json/, `${route}, ${what}: JSON body`)
      const message = route.startsWith('/approvals') ? (r.body as { message?: unknown }).message : (r.body as { error?: unknown }).error
      t.match(message, /\S/, `${route}, ${what}: says what is wrong (${String(message)})`)
      if (route.startsWith('/approvals')) t.same(schemaErrors('gate.http.error_body.v1', r.body), [], `${route}, ${what}: error body schema`)
    }
    // none of these routes takes a query parameter: one given is refused by name, not ignored
    const query = await call(`${gate.url}${route}?dry_run=1`, { body: wrongTypes, headers: json })
    t.equal(query.status, 400, `${route}?dry_run=1: 400`)
    const queryMessage = route.startsWith('/approvals') ? (query.body as { message?: unknown }).message : (query.body as { error?: unknown }).error
    t.match(queryMessage, /unknown query parameter: dry_run/, `${route}?dry_run=1: names the parameter`)
    // a right token beside a wrong one is ambiguous: refused like a wrong one
    const twice = await call(`${gate.url}${route}`, { body: {}, headers: { authorization: [`Bearer ${TOKEN}`, 'Bearer wrong-token-0123456789'] } })
    t.equal(twice.status, 401, `${route}: two Authorization headers → 401`)
  }
  for (const path of ['/approvals?state=approved', `/approvals/${approvalId}?verbose=1`, '/v1/authority?generation=1']) {
    const r = await call(`${gate.url}${path}`, { headers: auth })
    t.equal(r.status, 400, `GET ${path}: 400 instead of an answer that ignores the parameter`)
    t.match(JSON.stringify(r.body), /unknown query parameter/, `GET ${path}: says which parameter`)
  }
  t.equal((await call(`${gate.url}/approvals?state=approved`)).status, 401, 'without the control token the answer is still 401')
  const huge = await sendRawRequest(
    gate.url,
    ['POST /v1/revocations HTTP/1.1', `authorization: ${auth.authorization}`, 'content-type: application/json', `x-junk: ${'a'.repeat(64 * 1024)}`],
    JSON.stringify({ capabilityId: capability.id }),
  )
  t.equal(huge.status, 431, 'oversized headers are refused before the route runs')

  t.equal(await receiptCount(), before, 'no receipt was written by any refused request')
  const approval = await call(`${gate.url}/approvals/${approvalId}`, { headers: auth })
  t.match(approval.body, { state: 'pending' }, 'the approval is still pending')
  const still = await evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })
  t.match(still.body, { verdict: { verdict: 'allow' } }, 'the capability was not revoked')
  t.equal((await call(`${gate.url}/v1/revocations`, { body: { capabilityId: capability.id }, headers: auth })).status, 200, 'valid requests are still served')
})

t.test('restart with the same seed: old receipts still verify', async t => {
  const { gate, spec, seed, db } = await start(t)
  const first = await evaluate(gate, request('GET', '/pets'))
  const receipt = (first.body as { receipt: HttpReceipt }).receipt
  t.equal(await gate.stop('SIGTERM'), 0, 'clean exit on SIGTERM')
  t.match(gate.output(), /receipts flushed/)
  const again = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => again.stop('SIGKILL'))
  const v = await call(`${again.url}/gate/verify`, { body: receipt })
  t.match(v.body, { ok: true, signer_trusted: true })
})

t.test('a foreign SQLite file is refused with a clear error', async t => {
  const dir = t.testdir()
  const foreign = join(dir, 'foreign.db')
  const sqlite3 = (await import('sqlite3')).default
  await new Promise<void>((resolve, reject) => {
    const db = new sqlite3.Database(foreign)
    db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers(name) VALUES (\'x\')', err => (err ? reject(err) : db.close(() => resolve())))
  })
  const r = await runGate(['sidecar', '--listen', '127.0.0.1:0', '--receipt-store', foreign])
  t.equal(r.code, 1)
  t.match(r.stderr + r.stdout, /foreign|not a Gate|application/i)
  t.match(readFileSync(foreign).subarray(0, 15).toString(), 'SQLite format 3', 'file left intact')
})

t.test('without a seed file a warning is logged and a fresh key is used', async t => {
  const dir = t.testdir()
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'r.db')])
  t.teardown(() => gate.stop('SIGKILL'))
  t.match(gate.output(), /warning: no --authority-seed-file/)
})

t.test('gate capability issue / revoke drive the control routes', async t => {
  const { gate } = await start(t)
  const env = { GATE_CONTROL_TOKEN: TOKEN }
  const issued = await runGate(['capability', 'issue', '--subject', agentKey, '--grant', 'POST /pets', '--ttl', '600', '--control-url', gate.url], { env })
  t.equal(issued.code, 0, issued.stderr)
  const [json, header] = issued.stdout.trim().split('\n') as [string, string]
  const capability = JSON.parse(json) as { id: string; expires_at: number; issued_at: number }
  t.equal(capability.expires_at - capability.issued_at, 600)
  t.match((await evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })).body, { verdict: { verdict: 'allow' } })
  const revoked = await runGate(['capability', 'revoke', capability.id, '--control-url', gate.url], { env })
  t.equal(revoked.code, 0, revoked.stderr)
  t.match(JSON.parse(revoked.stdout), { capabilityId: capability.id, revoked: true, newlyRevoked: true })
  t.match((await evaluate(gate, request('POST', '/pets'), { 'x-gate-capability': header })).body, { verdict: { verdict: 'deny' } })
  const noToken = await runGate(['capability', 'revoke', capability.id, '--control-url', gate.url], { env: { GATE_CONTROL_TOKEN: '' } })
  t.equal(noToken.code, 1)
  t.match(noToken.stderr, /401/)
  const usage = await runGate(['capability', 'issue', '--subject', 'xyz', '--grant', 'POST /pets'])
  t.equal(usage.code, 2)
})
