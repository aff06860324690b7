// `gate api protect` in a fleet: the same --control-url wiring as `gate sidecar`. A capability issued at
// trust-control lets a request through to the upstream, its revocation there is honoured by the proxy,
// and the proxy's receipts (decision and final) reach trust-control's receipt query.
import t from 'tap'
import { join } from 'node:path'
import { call } from '../testing/http-client.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { FLEET_TOKEN, startFleetWithUpstream, fleetHealth, issueCentrally, receiptIdsAtControl, revokeCentrally, waitUntil } from '../testing/fleet.js'

t.test('a protected API honours central issuance and revocation and ships its receipts', async t => {
  const { dir, spec, upstream, control } = await startFleetWithUpstream(t)
  const proxy = await spawnGate(
    ['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'proxy', 'receipts.db'), '--control-url', control.url, '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } },
  )
  t.teardown(() => proxy.stop('SIGKILL'))
  const capability = await issueCentrally(control.url)
  const header = { 'x-gate-capability': Buffer.from(JSON.stringify(capability)).toString('base64url') }
  const post = () => call(`${proxy.url}/pets`, { body: { name: 'Tom' }, headers: header })

  const allowed = await post()
  t.equal(allowed.status, 201, 'a centrally issued capability reaches the upstream')
  await revokeCentrally(control.url, capability.id)
  await waitUntil('the proxy denies the revoked capability', async () => (await post()).status === 403)
  const denied = await post()
  t.match(denied.body, { error: 'gate_access_denied', message: `capability ${capability.id} has been revoked` })

  await waitUntil('the proxy ships its receipts', async () => (await fleetHealth(proxy.url)).outbox.lag === 0)
  const stored = new Set(await receiptIdsAtControl(control.url))
  for (const res of [allowed, denied]) t.ok(stored.has(res.headers['x-gate-receipt-id'] as string), `receipt ${res.headers['x-gate-receipt-id']} is at trust-control`)
})
