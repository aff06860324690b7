// A fleet over TLS: trust-control serves HTTPS with a certificate of a private CA; a sidecar given it
// with --control-ca joins (follows the authority, mirrors revocations, enrols, ships receipts); one
// without it cannot verify trust-control, so it trusts nothing from it and denies capabilities.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { createSigner, generateSecret } from '@gate/sdk'
import { spawnGate } from '../testing/spawn-gate.js'
import { evaluate, FLEET_TOKEN, fleetHealth, startFleetSidecar, waitUntil } from '../testing/fleet.js'

t.test('--control-ca lets a sidecar join an HTTPS trust-control; without it nothing is trusted', async t => {
  const dir = t.testdir()
  mkdirSync(join(dir, 'control'))
  const made = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`)
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const control = await spawnGate(
    ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', join(dir, 'control', 'receipts.db'), '--service-token-file', join(dir, 'control', 'token'), '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')],
    { env: { GATE_CONTROL_TOKEN: '' } },
  )
  t.teardown(() => control.stop('SIGKILL'))
  t.match(control.url, /^https:/, 'trust-control serves HTTPS')

  const joined = await startFleetSidecar(t, dir, 1, control.url, ['--control-ca', join(dir, 'cert.pem')])
  const stranger = await startFleetSidecar(t, dir, 2, control.url)

  const dispatcher = new Agent({ connect: { ca: readFileSync(join(dir, 'cert.pem')) } })
  t.teardown(() => dispatcher.close())
  const issued = await request(`${control.url}/v1/capabilities/issue`, {
    method: 'POST',
    dispatcher,
    headers: { authorization: `Bearer ${FLEET_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
  })
  const { capability } = (await issued.body.json()) as { capability: Parameters<typeof evaluate>[1] }

  t.match(await evaluate(joined.url, capability), { verdict: 'allow' }, 'the sidecar with --control-ca trusts the central authority')
  await waitUntil('its receipts are shipped over TLS', async () => {
    const h = await fleetHealth(joined.url)
    return h.key_enrolled && h.outbox.lag === 0
  })
  t.match(await evaluate(stranger.url, capability), { verdict: 'deny', reasonCode: 'revocation_state_stale' }, 'without the CA: no revocations received, capabilities denied')
  t.match(await evaluate(stranger.url), { verdict: 'allow' }, 'and requests presenting none are served')
  t.notOk((await fleetHealth(stranger.url)).key_enrolled, 'nothing was sent to an unverified trust-control')
})
