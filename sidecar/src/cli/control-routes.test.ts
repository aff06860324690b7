// Control routes without a configured token (issue 24, item 1), against the real processes. The attack:
// with no control token, `/v1/*` on `gate api protect`'s public port was "loopback only", and behind an
// ingress every caller is loopback, so anyone minted a one-year `*` capability and sent DELETE /pets/1
// upstream. Now the process makes a token, keeps it in a 0600 file and prints where (never the token);
// every control route answers 401 without it. The `gate` client finds the file by itself.
import t, { type Test } from 'tap'
import { mkdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, generateSecret } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { call } from '../testing/http-client.js'

const WILDCARD_YEAR = { subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, ttlSeconds: 31_536_000 }
// whatever the environment of the test run holds, these processes get no token
const NO_TOKEN = { GATE_CONTROL_TOKEN: '' }

/** Every control route refuses a caller without the token (here: loopback, as behind an ingress). */
async function expectControlRoutesClosed(t: Test, gate: GateProcess, headers: Record<string, string> = {}): Promise<void> {
  const routes: [string, string, unknown][] = [
    ['POST', '/v1/capabilities/issue', WILDCARD_YEAR],
    ['POST', '/v1/revocations', { capabilityId: 'cap_anything' }],
    ['GET', '/v1/receipts/query', undefined],
    ['GET', '/v1/authority', undefined],
    ['GET', '/approvals', undefined],
    ['POST', '/approvals/abc/respond', { decision: 'approve' }],
  ]
  for (const [method, path, body] of routes) {
    const r = await call(`${gate.url}${path}`, { method, body, headers: { 'x-forwarded-for': '127.0.0.1', ...headers } })
    t.equal(r.status, 401, `${method} ${path}: 401`)
  }
}

function tokenFileOf(gate: GateProcess): string {
  const m = /control routes \(\/v1\/\*, \/approvals\*\): bearer token in (\S+)/.exec(gate.output())
  if (m === null) throw new Error(`no token file line in:\n${gate.output()}`)
  return m[1]!
}

t.test('gate api protect without a token: the public port mints nothing; the token is in a 0600 file', async t => {
  const { dir, spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: NO_TOKEN })
  t.teardown(() => gate.stop('SIGKILL'))
  await expectControlRoutesClosed(t, gate)
  await expectControlRoutesClosed(t, gate, { authorization: 'Bearer not-the-control-token-0000' })
  const deleted = await call(`${gate.url}/pets/1`, { method: 'DELETE' })
  t.equal(deleted.status, 403, 'DELETE /pets/1 is refused')
  t.notOk(upstream.received.some(r => r.method === 'DELETE'), 'and never reaches the upstream')

  const file = tokenFileOf(gate)
  t.equal(file, join(dir, 'control-token'), 'beside the receipt store')
  t.match(gate.output(), /\(created now, mode 0600\)/)
  t.equal(statSync(file).mode & 0o777, 0o600)
  const token = readFileSync(file, 'utf8').trim()
  t.notMatch(gate.output(), token, 'the token itself is never printed')
  const issued = await call(`${gate.url}/v1/capabilities/issue`, { body: WILDCARD_YEAR, headers: { authorization: `Bearer ${token}` } })
  t.equal(issued.status, 200, 'the holder of the file can issue')
})

t.test('gate sidecar without a token: closed control routes, a token that survives restarts, a client that finds it', async t => {
  const { dir, spec, seed } = await gateFiles(t)
  // as the README runs it: a relative store under .gate in the working directory
  const args = ['sidecar', '--spec', spec, '--receipt-store', '.gate/receipts.db', '--authority-seed-file', seed, '--listen', '127.0.0.1:0']
  const gate = await spawnGate(args, { env: NO_TOKEN, cwd: dir })
  await expectControlRoutesClosed(t, gate)
  const file = tokenFileOf(gate)
  t.equal(file, join(dir, '.gate', 'control-token'))
  const token = readFileSync(file, 'utf8').trim()
  await gate.stop('SIGTERM')

  const again = await spawnGate(args, { env: NO_TOKEN, cwd: dir })
  t.teardown(() => again.stop('SIGKILL'))
  t.notMatch(again.output(), /created now/, 'the restart reuses the file')
  t.equal(readFileSync(file, 'utf8').trim(), token, 'and its token')

  const subject = createSigner({ secret: generateSecret() }).publicKey
  const issue = ['capability', 'issue', '--subject', subject, '--grant', 'POST /pets', '--control-url', again.url]
  const here = await runGate(issue, { env: NO_TOKEN, cwd: dir })
  t.equal(here.code, 0, `gate capability issue reads .gate/control-token in the same directory: ${here.stderr}`)
  const other = join(dir, 'elsewhere')
  mkdirSync(other)
  const elsewhere = await runGate(issue, { env: NO_TOKEN, cwd: other })
  t.equal(elsewhere.code, 1, 'elsewhere, without a token, it is refused')
  t.match(elsewhere.stderr, /answered 401: .*GATE_CONTROL_TOKEN, --control-token TOKEN, or --control-token-file PATH/)
  const byFile = await runGate([...issue, '--control-token-file', file], { env: NO_TOKEN, cwd: other })
  t.equal(byFile.code, 0, `--control-token-file works from anywhere: ${byFile.stderr}`)
})

t.test('a short or loose token refuses to start, naming the fix and not the token', async t => {
  const { spec } = await gateFiles(t)
  const short = await runGate(['sidecar', '--spec', spec, '--allow-ephemeral-receipts', '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: 'change-me' } })
  t.equal(short.code, 1)
  t.match(short.stderr, /GATE_CONTROL_TOKEN must be a token of at least 16 characters/)
  t.notMatch(short.stderr, /change-me/)
})
