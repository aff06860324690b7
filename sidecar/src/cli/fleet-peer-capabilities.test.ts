// A service joined to trust-control (--control-url) reads trust-control's capability negotiation
// envelope (spec 03 gate.capabilities.v1, on its GET /health) before it enrols its key or ships a
// receipt. A real trust-control agrees on hybrid signatures with a sidecar signing with a hybrid key,
// which enrols and ships. A peer advertising no hybrid signatures, an envelope of another schema id or
// none at all refuses the start with gate_incompatible_peer, and nothing is sent to the peer after
// its /health. A peer that could not be read at start and turns out incompatible later gets no
// enrolment and no receipt either. Real `gate` processes; the incompatible peers are a small HTTP
// server, since a real trust-control cannot serve such envelopes.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { call } from '../testing/http-client.js'
import { runGate, spawnGate, waitForOutput } from '../testing/spawn-gate.js'
import { FLEET_TOKEN, fleetHealth, startFleetSidecar, startFleetWithUpstream, waitUntil } from '../testing/fleet.js'

const FEATURES = { accepts_anchor_batch_v1: false, accepts_hybrid_signatures: true, delegation_chain_binding: true }

/** A peer answering GET /health with `health` (and 404 to anything else), recording every request; on `port` when given. */
async function fakePeer(t: Test, health: unknown, port = 0, healthStatus = 200): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    const found = req.method === 'GET' && req.url === '/health'
    res.writeHead(found ? healthStatus : 404, { 'content-type': 'application/json' })
    res.end(JSON.stringify(found ? health : { error: 'gate_not_found' }))
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

async function keyFile(dir: string, algorithm: string): Promise<string> {
  const file = join(dir, `${algorithm}.key`)
  const keygen = await runGate(['keygen', '--algorithm', algorithm, file])
  if (keygen.code !== 0) throw new Error(keygen.stderr)
  return file
}

t.test('a hybrid-key sidecar agrees with a real trust-control, enrols its key and ships its receipts', async t => {
  const { dir, spec, control } = await startFleetWithUpstream(t)
  const health = (await call(`${control.url}/health`)).body as { capabilities: unknown }
  t.same(health.capabilities, { schema: 'gate.capabilities.v1', features: FEATURES }, 'trust-control serves its envelope on /health')
  const key = await keyFile(dir, 'hybrid')
  const sidecar = await startFleetSidecar(t, dir, 1, control.url, ['--spec', spec, '--authority-seed-file', key])
  t.match(sidecar.output(), /capabilities agreed: accepts_hybrid_signatures, delegation_chain_binding/)
  const evaluated = await call(`${sidecar.url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method: 'GET', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) },
  })
  t.equal(evaluated.status, 200)
  await waitUntil('the hybrid receipt is shipped', async () => {
    const fleet = await fleetHealth(sidecar.url)
    return fleet.key_enrolled && fleet.outbox.lag === 0
  })
  const id = (evaluated.body as { receipt: { id: string } }).receipt.id
  t.equal((await call(`${control.url}/v1/receipts/${id}`, { headers: { authorization: `Bearer ${FLEET_TOKEN}` } })).status, 200, 'trust-control holds it')
})

const REFUSALS = [
  {
    name: 'a peer without accepts_hybrid_signatures, for a hybrid key',
    algorithm: 'p256+mldsa65',
    health: { status: 'healthy', capabilities: { schema: 'gate.capabilities.v1', features: { ...FEATURES, accepts_hybrid_signatures: false } } },
    reason: /does not advertise accepts_hybrid_signatures, which this side needs/,
  },
  {
    name: 'an envelope of another schema id',
    algorithm: 'ed25519',
    health: { status: 'healthy', capabilities: { schema: 'gate.capabilities.v2', features: FEATURES } },
    reason: /unsupported capabilities schema "gate.capabilities.v2"/,
  },
  {
    name: 'a malformed feature name',
    algorithm: 'ed25519',
    health: { status: 'healthy', capabilities: { schema: 'gate.capabilities.v1', features: { ...FEATURES, 'Accepts-Hybrid': true } } },
    reason: /malformed feature name "Accepts-Hybrid"/,
  },
  { name: 'no envelope at all', algorithm: 'ed25519', health: { status: 'healthy' }, reason: /capabilities envelope is not a JSON object/ },
]

for (const [i, refusal] of REFUSALS.entries()) {
  // the sidecar and `gate api protect` share the fleet link: alternate between them
  const service = i % 2 === 0 ? 'sidecar' : 'api protect'
  t.test(`${service}: ${refusal.name} refuses the start with gate_incompatible_peer, shipping nothing`, async t => {
    const { dir, spec, upstream } = await startFleetWithUpstream(t)
    const peer = await fakePeer(t, refusal.health)
    const key = await keyFile(dir, refusal.algorithm)
    const common = ['--spec', spec, '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'receipts.db'), '--control-url', peer.url, '--authority-seed-file', key, '--no-transparency-log']
    const args = service === 'sidecar' ? ['sidecar', ...common] : ['api', 'protect', '--upstream', upstream.url, ...common]
    const run = await runGate(args, { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } })
    t.equal(run.code, 1, 'the start is refused')
    t.match(run.stdout + run.stderr, /gate_incompatible_peer: trust-control .*; refusing to start/, 'logged with the spec\'s code')
    t.match(run.stderr, refusal.reason)
    t.match(run.stderr, new RegExp(`gate ${service}: trust-control ${peer.url.replaceAll('.', '\\.')}: `), 'the error names the peer')
    t.same(peer.requests, ['GET /health'], 'nothing but the envelope was read: no enrolment, no receipt')
  })
}

t.test('a peer unreachable at start and incompatible once it answers: no enrolment, no receipt shipped', async t => {
  const { dir, spec } = await startFleetWithUpstream(t)
  // a port nothing listens on yet
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const port = (probe.address() as AddressInfo).port
  await new Promise<void>(resolve => probe.close(() => resolve()))
  const key = await keyFile(dir, 'hybrid')
  const sidecar = await spawnGate(
    ['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', join(dir, 'late.db'), '--control-url', `http://127.0.0.1:${port}`, '--authority-seed-file', key, '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } },
  )
  t.teardown(() => sidecar.stop('SIGKILL'))
  t.match(sidecar.output(), /capabilities cannot be read yet/, 'the start goes on without the envelope')
  const evaluated = await call(`${sidecar.url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method: 'GET', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) },
  })
  t.equal(evaluated.status, 200, 'decisions are made meanwhile')
  const peer = await fakePeer(t, { status: 'healthy', capabilities: { schema: 'gate.capabilities.v1', features: { ...FEATURES, accepts_hybrid_signatures: false } } }, port)
  await waitForOutput(sidecar, /gate_incompatible_peer: trust-control .* does not advertise accepts_hybrid_signatures.*; the signing key is not enrolled and no receipt is shipped/)
  const fleet = await fleetHealth(sidecar.url)
  t.equal(fleet.key_enrolled, false)
  t.equal(fleet.outbox.lag, 1, 'the receipt waits in the outbox')
  t.same(peer.requests.filter(r => r.startsWith('POST')), [], 'no enrolment and no ingest reached the peer')
})

t.test('a trust-control still starting (503, no health yet) is not refused: the start goes on', async t => {
  const { dir, spec } = await startFleetWithUpstream(t)
  const peer = await fakePeer(t, { error: 'gate_service_starting', message: 'starting' }, 0, 503)
  const sidecar = await spawnGate(
    ['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', join(dir, 'starting.db'), '--control-url', peer.url, '--authority-seed-file', await keyFile(dir, 'ed25519'), '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } },
  )
  t.teardown(() => sidecar.stop('SIGKILL'))
  t.match(sidecar.output(), /capabilities cannot be read yet .*GET \/health is no health answer/)
  t.notMatch(sidecar.output(), /gate_incompatible_peer/)
})
