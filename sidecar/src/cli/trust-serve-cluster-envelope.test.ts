// A `gate trust serve` cluster node reads each peer's capability negotiation envelope (spec 03
// gate.capabilities.v1, the peer's GET /health) and does not count a peer whose envelope is
// incompatible. The real node runs on PostgreSQL with a fixed membership of two; the other member is a
// small HTTP server writing its heartbeat to the same database (a real node cannot serve such an
// envelope): with an envelope of another schema id the node has no quorum and logs
// gate_incompatible_peer, and once the peer serves a compatible one it is counted again.
import t from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { createSigner } from '@gate/sdk'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { openPgStores } from '@gate/trust/postgres'
import { call } from '../testing/http-client.js'
import { freeLoopbackPort } from '../testing/debian-server.js'
import { spawnGate, waitForOutput } from '../testing/spawn-gate.js'

const skip = postgresSkipReason()
const SERVICE_TOKEN = 'cluster-envelope-token-0123456789abcdef'
const FEATURES = { accepts_anchor_batch_v1: false, accepts_hybrid_signatures: true, delegation_chain_binding: true }

t.test('a cluster peer with an incompatible envelope is not counted in the quorum', { skip }, async t => {
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_envelope')
  const dir = t.testdir({ token: SERVICE_TOKEN })
  const [port, peerPort] = [await freeLoopbackPort(), await freeLoopbackPort()]
  const peerUrl = `http://127.0.0.1:${peerPort}`

  let envelope: unknown = { schema: 'gate.capabilities.v2', features: FEATURES }
  const peer = createServer((req, res) => {
    const health = req.url === '/health'
    res.writeHead(health ? 200 : 404, { 'content-type': 'application/json' })
    res.end(JSON.stringify(health ? { status: 'healthy', clustered: true, capabilities: envelope } : { error: 'gate_not_found' }))
  })
  peer.listen(peerPort, '127.0.0.1')
  await once(peer, 'listening')
  t.teardown(() => new Promise<void>(resolve => peer.close(() => resolve())))

  const node = await spawnGate(
    ['trust', 'serve', '--listen', `127.0.0.1:${port}`, '--advertise-url', `http://127.0.0.1:${port}`, '--cluster-peer', peerUrl, '--database-url', url, '--service-token-file', join(dir, 'token'), '--cluster-sync-interval-ms', '1000', '--checkpoint-every', '0'],
    { env: { GATE_CONTROL_TOKEN: '' } },
  )
  t.teardown(() => node.stop('SIGKILL'))
  // the peer's heartbeat, written as a node writes it, for as long as the test runs
  const stores = await openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  const beat = () => stores.cluster.heartbeat({ nodeId: peerUrl, startedAt: 1, term: 0, authorityGeneration: 1 }, 60_000, []).then(() => undefined)
  await beat()
  const heartbeats = setInterval(() => void beat().catch(() => undefined), 300)
  t.teardown(() => clearInterval(heartbeats))

  await waitForOutput(node, new RegExp(`cluster: gate_incompatible_peer: cluster peer ${peerUrl.replaceAll('.', '\\.')}: unsupported capabilities schema .{1,2}gate\\.capabilities\\.v2.*not counted in the quorum`))
  const refused = (await call(`${node.url}/health`)).body as { cluster: Record<string, unknown> }
  t.match(refused.cluster, { peerCount: 1, healthyPeers: 0, hasQuorum: false, leaderUrl: null }, 'the peer is not counted: no quorum')

  envelope = { schema: 'gate.capabilities.v1', features: FEATURES }
  // read again on a later heartbeat (peer-envelopes.ts REREAD_MS)
  await waitForOutput(node, new RegExp(`cluster: peer ${peerUrl.replaceAll('.', '\\.')} advertises a compatible envelope again`))
  const counted = (await call(`${node.url}/health`)).body as { cluster: Record<string, unknown> }
  t.match(counted.cluster, { healthyPeers: 1, hasQuorum: true }, 'counted again: quorum')
})
