// Revocations made by `gate trust serve` reach a running `gate sidecar` on the same store (issue 24,
// item 4). The attack: the row was written, but the sidecar kept the set it loaded at start and
// honoured the token until it restarted. Here the sidecar allows a token, trust-control revokes it,
// and the sidecar's answer is polled (bounded by one second) until it denies saying so.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, createSigner, generateSecret, uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'

const SIDECAR_TOKEN = 'revocation-sync-sidecar-token-0123'
const SERVICE_TOKEN = 'revocation-sync-service-token-0123'

function request() {
  return { request_id: uuidv7(), method: 'POST', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000), body_hash: null }
}

t.test('a revocation through gate trust serve is honoured by the running sidecar within one second', async t => {
  const { dir, spec, seed, db } = await gateFiles(t)
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: SIDECAR_TOKEN } })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const tokenFile = join(dir, 'service-token')
  writeFileSync(tokenFile, `${SERVICE_TOKEN}\n`, { mode: 0o600 })
  const trust = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed, '--service-token-file', tokenFile], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => trust.stop('SIGKILL'))

  const issued = await call(`${sidecar.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 },
    headers: { authorization: `Bearer ${SIDECAR_TOKEN}` },
  })
  const capability = (issued.body as { capability: { id: string } }).capability
  const header = { 'x-gate-capability': Buffer.from(JSON.stringify(capability)).toString('base64url') }
  const verdictOf = async () => ((await call(`${sidecar.url}/gate/evaluate`, { body: request(), headers: header })).body as { verdict: { verdict: string; reason?: string } }).verdict
  t.match(await verdictOf(), { verdict: 'allow' }, 'allowed before the revocation')

  const revoked = await call(`${trust.url}/v1/revocations`, { body: { capabilityId: capability.id }, headers: { authorization: `Bearer ${SERVICE_TOKEN}` } })
  t.match(revoked, { status: 200, body: { revoked: true, newlyRevoked: true } }, 'revoked by trust-control, on its own connection to the store')
  const deadline = Date.now() + 1000
  let verdict = await verdictOf()
  while (verdict.verdict === 'allow' && Date.now() < deadline) verdict = await verdictOf()
  t.match(verdict, { verdict: 'deny', reason: `capability ${capability.id} has been revoked` }, 'the running sidecar denies within the second, without a restart')
})
