// End-to-end: a run of the real `gate sidecar` and `gate api protect` with every log level on, fed
// requests carrying secrets (control token, capability token, bearer credential, API key, cookie,
// caller subject). Every line the process prints must be a JSON object, and none may contain a secret.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'

const CONTROL_TOKEN = 'log-secret-control-token-' + 'c'.repeat(16)
const BEARER = 'log-secret-bearer-credential-b7e1'
const API_KEY = 'log-secret-api-key-a91f'
const COOKIE = 'session=log-secret-cookie-77d2'
const SUBJECT = 'log-secret-subject-alice@example.com'
const SECRETS = [CONTROL_TOKEN, BEARER, API_KEY, 'log-secret-cookie-77d2', SUBJECT]
const LOUD = ['--log-level', 'trace', '--decision-log-level', 'info']

/** Every line of the run parsed as JSON; fails the test on a line that is not a JSON object. */
function logLines(t: Test, gate: GateProcess): Record<string, unknown>[] {
  const lines = gate.output().split('\n').filter(line => line !== '')
  return lines.map(line => {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      t.fail(`not a JSON line: ${line}`)
    }
    t.type(value, 'object', line)
    return value as Record<string, unknown>
  })
}

function assertNoSecret(t: Test, gate: GateProcess, secrets: readonly string[]): void {
  const output = gate.output()
  for (const secret of secrets) t.notOk(output.includes(secret), `the log never contains ${secret.slice(0, 20)}…`)
}

t.test('sidecar: every line is JSON; decisions, startup and shutdown logged; no secret appears', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...LOUD], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  t.teardown(() => gate.stop('SIGKILL'))
  const control = { authorization: `Bearer ${CONTROL_TOKEN}` }
  const issued = await call(`${gate.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: 'a'.repeat(64), scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 600 },
    headers: control,
  })
  t.equal(issued.status, 200, issued.text)
  const capability = Buffer.from(JSON.stringify((issued.body as { capability: unknown }).capability)).toString('base64url')
  const allowedId = uuidv7()
  const deniedId = uuidv7()
  const caller = { subject: SUBJECT, auth_method: { method: 'bearer', token_hash: 'f'.repeat(64) }, tenant: 'acme' }
  const base = { method: 'POST', path: '/pets', route_pattern: '/pets', caller, timestamp: Math.floor(Date.now() / 1000) }
  const allowed = await call(`${gate.url}/gate/evaluate`, {
    body: { ...base, request_id: allowedId },
    headers: { 'x-gate-capability': capability, cookie: COOKIE, 'x-api-key': API_KEY },
  })
  t.equal(allowed.status, 200, allowed.text)
  // a bearer on /gate/evaluate presents the control token (docs/security.md): a wrong one is refused, unlogged
  const wrongBearer = await call(`${gate.url}/gate/evaluate`, { body: { ...base, request_id: uuidv7() }, headers: { authorization: `Bearer ${BEARER}` } })
  t.equal(wrongBearer.status, 401)
  t.match(allowed.body, { verdict: { verdict: 'allow' } })
  const denied = await call(`${gate.url}/gate/evaluate`, { body: { ...base, request_id: deniedId }, headers: { cookie: COOKIE } })
  t.match(denied.body, { verdict: { verdict: 'deny' } })
  t.equal((await call(`${gate.url}/approvals`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401)
  t.equal((await call(`${gate.url}/metrics`, { headers: control })).status, 200)
  await gate.stop('SIGTERM')

  const lines = logLines(t, gate)
  t.match(lines[0], { level: String, time: /^\d{4}-\d\d-\d\dT/, service: 'gate sidecar', pid: Number, msg: String })
  t.ok(lines.some(l => typeof l.msg === 'string' && l.msg.startsWith('listening on http://127.0.0.1:')), 'the listening line')
  const decisions = lines.filter(l => l.event === 'decision')
  t.equal(decisions.length, 2, 'one line per decision')
  const allowedReceipt = (allowed.body as { receipt: { id: string; caller_identity_hash: string } }).receipt
  t.match(decisions.find(d => d.request_id === allowedId), {
    level: 'info',
    verdict: 'allow',
    reason_code: 'allowed',
    route: '/pets',
    method: 'POST',
    status: 200,
    receipt_id: allowedReceipt.id,
    caller_identity_hash: allowedReceipt.caller_identity_hash,
    latency_ms: Number,
  })
  t.match(decisions.find(d => d.request_id === deniedId), { verdict: 'deny', reason_code: 'capability_required', status: 403 })
  t.ok(lines.some(l => l.event === 'shutdown' && l.signal === 'SIGTERM'), 'the shutdown line')
  t.ok(lines.some(l => l.event === 'stopped'), 'the stopped line')
  assertNoSecret(t, gate, [...SECRETS, capability, capability.slice(10, 60)])
})

t.test('api protect: proxied credentials and cookies never reach the log', async t => {
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const dir = t.testdir({ 'pets.yaml': PETS_SPEC_YAML })
  const gate = await spawnGate(
    ['api', 'protect', '--upstream', upstream.url, '--spec', join(dir, 'pets.yaml'), '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'r.db'), ...LOUD],
    { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } },
  )
  t.teardown(() => gate.stop('SIGKILL'))
  const secretHeaders = { authorization: `Bearer ${BEARER}`, cookie: COOKIE, 'x-api-key': API_KEY }
  t.ok((await call(`${gate.url}/pets/7?gate_capability=${SUBJECT}`, { headers: secretHeaders })).status < 500)
  t.equal((await call(`${gate.url}/pets`, { body: { owner: SUBJECT }, headers: { ...secretHeaders, 'x-gate-capability': 'bm90LWEtdG9rZW4' } })).status, 403)
  t.equal((await call(`${gate.url}/pets/${uuidv7()}`, { method: 'DELETE', headers: secretHeaders })).status >= 400, true)
  await gate.stop('SIGTERM')
  const lines = logLines(t, gate)
  t.ok(lines.some(l => typeof l.msg === 'string' && l.msg.startsWith('protecting ')), 'the startup line of spec 01')
  t.ok(lines.filter(l => l.event === 'decision').length >= 3, 'decisions logged')
  assertNoSecret(t, gate, SECRETS)
})

t.test('--log-level rejects an unknown level (exit 2)', async t => {
  const { runGate } = await import('../testing/spawn-gate.js')
  const r = await runGate(['sidecar', '--allow-ephemeral-receipts', '--listen', '127.0.0.1:0', '--log-level', 'loud'], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.equal(r.code, 2)
  t.match(r.stderr, /--log-level must be one of fatal, error, warn, info, debug, trace, got "loud"/)
})

t.test('at the default levels decisions are not logged; startup and shutdown are', async t => {
  const gate = await spawnGate(['sidecar', '--allow-ephemeral-receipts', '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const base = { method: 'GET', path: '/pets', route_pattern: '/pets', caller: { subject: SUBJECT, auth_method: { method: 'bearer', token_hash: 'e'.repeat(64) } }, timestamp: Math.floor(Date.now() / 1000) }
  const r = await call(`${gate.url}/gate/evaluate`, { body: { ...base, request_id: uuidv7() } })
  t.equal(r.status, 200, r.text)
  await gate.stop('SIGTERM')
  const lines = logLines(t, gate)
  t.equal(lines.filter(l => l.event === 'decision').length, 0, 'decision lines are debug by default')
  t.ok(lines.some(l => l.level === 'warn' && String(l.msg).includes('no --authority-seed-file')), 'warnings at warn')
  t.ok(lines.some(l => l.event === 'stopped'))
  assertNoSecret(t, gate, [SUBJECT, CONTROL_TOKEN])
})
