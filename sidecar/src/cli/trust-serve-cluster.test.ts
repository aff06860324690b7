// Three `gate trust serve` nodes of a fixed membership on one PostgreSQL database: the spec 03 cluster block on /health, the
// peer-authenticated status route (gate.cluster.peer.v1), budget captures spread over the nodes that never
// pass a maximum, heartbeats that never queue behind requests, `kill -9` of one node under a mixed
// read/write load (no acknowledged write lost, the others keep answering), and the database going away
// and coming back (503, then recovery without a restart).
import t from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret, signHttpReceiptJson, uuidv7 } from '@gate/sdk'
import { peerAuthHeaders } from '@gate/trust'
import { call, type JsonResponse } from '../testing/http-client.js'
import { postgresSkipReason, startPostgres, type PostgresServer } from '@gate/trust/testing'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { receiptBody } from '../testing/receipt-rows.js'
import { openPgStores, type PgStores } from '@gate/trust/postgres'
import { freeLoopbackPort } from '../testing/debian-server.js'

const skip = postgresSkipReason()
const SERVICE_TOKEN = 'cluster-service-token-0123456789abcdef'
// a 1 s heartbeat: a 3 s lease, so a loaded test machine does not make live peers look stale
const SYNC_MS = '1000'
const STATUS = '/v1/internal/cluster/status'

let server!: PostgresServer
let url = ''
let stores!: PgStores
const nodes: GateProcess[] = []
const dir = t.testdir({ token: SERVICE_TOKEN })
const sidecarSigner = createSigner({ secret: generateSecret('ed25519') })

const auth = { authorization: `Bearer ${SERVICE_TOKEN}` }

// spec 03: the membership is fixed at start, each node listing the others' advertise URLs
async function startNode(port: number, peers: readonly number[]): Promise<GateProcess> {
  const membership = peers.flatMap(p => ['--cluster-peer', `http://127.0.0.1:${p}`])
  const args = ['--listen', `127.0.0.1:${port}`, '--advertise-url', `http://127.0.0.1:${port}`, ...membership]
  const node = await spawnGate(['trust', 'serve', ...args, '--database-url', url, '--service-token-file', join(dir, 'token'), '--cluster-sync-interval-ms', SYNC_MS, '--checkpoint-every', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => node.stop('SIGKILL'))
  return node
}

/** Polls `probe` until `done` holds (nodes learn of each other on their next heartbeat); fails after `timeoutMs`. */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

const health = (node: GateProcess) => call(`${node.url}/health`)
const clusterOf = (r: JsonResponse) => (r.body as { cluster: Record<string, any> }).cluster

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
  t.teardown(() => server.destroy())
  url = await server.createDatabase('gate_cluster')
  // three nodes started at once: one migrates, one creates the authority key, all agree on both
  const ports: number[] = []
  while (ports.length < 3) {
    const port = await freeLoopbackPort()
    if (!ports.includes(port)) ports.push(port)
  }
  nodes.push(...(await Promise.all(ports.map(port => startNode(port, ports.filter(p => p !== port))))))
  stores = await openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  // a write needs a quorum: the first node has one once it has judged a peer's heartbeat fresh
  await until(() => health(nodes[0]!), r => clusterOf(r)?.hasQuorum === true)
  const enrolled = await call(`${nodes[0]!.url}/v1/keys/enroll`, { body: { publicKey: sidecarSigner.publicKey, label: 'sidecar-1' }, headers: auth })
  if (enrolled.status !== 200) throw new Error(`enrol failed: ${enrolled.text}`)
})

t.test('every node reports the cluster of three: quorum 2, one shared leader, the same authority', { skip }, async t => {
  const bodies = await Promise.all(nodes.map(node => until(() => health(node), r => clusterOf(r)?.healthyPeers === 2)))
  const leader = [...nodes.map(n => n.url)].sort()[0]
  for (const [i, r] of bodies.entries()) {
    t.equal(r.status, 200)
    const body = r.body as Record<string, any>
    t.equal(body.clustered, true)
    t.match(body.cluster, { peerCount: 2, healthyPeers: 2, unhealthyPeers: 0, unknownPeers: 0, partitionedPeers: 0, lastErrorCount: 0, selfUrl: nodes[i]!.url, leaderUrl: leader, hasQuorum: true, quorumSize: 2, reachableNodes: 3 })
    t.type(body.cluster.electionTerm, 'number')
    t.match(body.authority, { generation: 1, trustedKeyCount: 1 })
  }
  t.equal(bodies.filter(r => clusterOf(r).role === 'leader').length, 1, 'exactly one leader')
  t.same(new Set(bodies.map(r => (r.body as { authority: { publicKey: string } }).authority.publicKey)).size, 1, 'one authority key for every node')
})

t.test('the cluster status route takes the gate.cluster.peer.v1 scheme only', { skip }, async t => {
  const [a, b] = [nodes[0]!, nodes[1]!]
  const endpoint = `${a.url}${STATUS}`
  const ok = await call(endpoint, { headers: peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: b.url, endpoint, term: 3 }) })
  t.equal(ok.status, 200, ok.text)
  t.match(ok.body, {
    nodeId: a.url,
    cluster: { peerCount: 2 },
    forceSnapshot: false,
    snapshotAppliedCount: 0,
    lastError: null,
    replicationHeads: { revocation_cursor_version: 1, revocation_stream_id: /^[0-9a-f]{32}$/, authorityGeneration: 1 },
  })
  t.equal((ok.body as { peers: unknown[] }).peers.length, 2)
  const refusals: [string, Record<string, string>, number, RegExp][] = [
    ['a bearer token alone', auth, 401, /peer authentication required/],
    ['nothing', {}, 401, /peer authentication required/],
    ['a node id outside the allowlist', peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: 'http://127.0.0.1:1', endpoint }), 403, /is not in the configured allowlist/],
    ['another service token', peerAuthHeaders({ serviceToken: 'another-token-0123456789abcdefgh', nodeId: b.url, endpoint }), 401, /digest does not verify/],
    ['a digest made for another node', peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: b.url, endpoint: `${nodes[2]!.url}${STATUS}` }), 401, /digest does not verify/],
    ['another scheme constant', peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: b.url, endpoint, scheme: 'gate.cluster.peer.v2' }), 401, /digest does not verify/],
    ['a time outside the 60 s skew', peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: b.url, endpoint, now: Math.floor(Date.now() / 1000) - 61 }), 401, /clock-skew window/],
    ['a malformed digest', { ...peerAuthHeaders({ serviceToken: SERVICE_TOKEN, nodeId: b.url, endpoint }), 'x-gate-cluster-digest': 'zz' }, 401, /malformed/],
  ]
  for (const [name, headers, status, message] of refusals) {
    const r = await call(endpoint, { headers })
    t.equal(r.status, status, name)
    t.match((r.body as { error: string }).error, message, name)
    if (status === 401) t.equal(r.headers['www-authenticate'], 'gate.cluster.peer.v1', `${name}: the peer scheme is the challenge`)
  }
})

t.test('budget captures spread over three nodes never pass the maximum', { skip }, async t => {
  const owner = `cap_${uuidv7()}`
  const plan = { invocations: [{ owner, key: '0:POST /pets', max: 25, fixedMax: false, kind: 'grant' }, { owner: 'family:root-1', key: 'family', max: 60, fixedMax: true, kind: 'family' }] }
  const results = await Promise.all(Array.from({ length: 90 }, (_, i) => call(`${nodes[i % 3]!.url}/v1/budgets/capture`, { body: plan, headers: auth })))
  t.same(results.filter(r => r.status !== 200).map(r => `${r.status} ${r.text}`), [], 'every capture answered')
  const allowed = results.filter(r => (r.body as { allowed: boolean }).allowed)
  t.equal(allowed.length, 25, 'exactly the maximum, across nodes')
  t.same(allowed.map(r => (r.body as { used: number[] }).used[0]).sort((x, y) => x! - y!), Array.from({ length: 25 }, (_, i) => i + 1), 'each count handed out once')
  t.match(await stores.budgets.usage(owner), { grants: [{ used: 25, maxInvocations: 25 }] })
})

t.test('heartbeats keep landing while every pooled connection waits on a row lock', { skip }, async t => {
  const node = nodes[0]!
  const owner = `cap_${uuidv7()}`
  const plan = { invocations: [{ owner, key: '0:GET /pets', max: 1000, fixedMax: false, kind: 'grant' }] }
  t.equal((await call(`${node.url}/v1/budgets/capture`, { body: plan, headers: auth })).status, 200)
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>(resolve => (locked = resolve))
  const holder = stores.db.withClient(async client => {
    await client.query('BEGIN')
    await client.query('SELECT 1 FROM invocation_budgets WHERE capability_id = $1 FOR UPDATE', [owner])
    locked()
    await released
    await client.query('COMMIT')
  })
  await isLocked
  // three times the node's pool (10 connections): every connection waits on the lock, the rest queue
  const pending = Promise.all(Array.from({ length: 30 }, () => call(`${node.url}/v1/budgets/capture`, { body: plan, headers: auth })))
  const lastSeen = async () => (await stores.db.get<{ at: string }>('SELECT last_seen::text AS at FROM cluster_nodes WHERE node_id = $1', [node.url]))?.at
  const first = await lastSeen()
  const second = await until(lastSeen, at => at !== first)
  await until(lastSeen, at => at !== second)
  t.match(clusterOf(await health(node)), { hasQuorum: true, lastErrorCount: 0 }, 'the node keeps its quorum')
  release()
  await holder
  t.same((await pending).filter(r => r.status !== 200).map(r => `${r.status} ${r.text}`), [], 'every capture answered once the lock was gone')
})

t.test('kill -9 of one node under mixed load: no acknowledged write is lost, the others keep answering', { skip }, async t => {
  const victim = nodes[2]!
  const acknowledged = { revocations: [] as string[], receipts: [] as string[], capabilities: [] as string[] }
  const failures = new Map<string, number>()
  let killedAt = 0
  let n = 0
  const deadline = Date.now() + 60_000
  const worker = async (w: number) => {
    let afterKill = 0
    while (afterKill < 40 && Date.now() < deadline) {
      const node = nodes[(w + n++) % 3]!
      const step = n % 4
      const survivor = killedAt > 0 && node !== victim
      try {
        if (step === 0) {
          const id = `cap-killed-${w}-${n}`
          const r = await call(`${node.url}/v1/revocations`, { body: { capabilityId: id }, headers: auth })
          if (r.status === 200) acknowledged.revocations.push(id)
          else if (survivor) t.fail(`a survivor answered ${r.status} to a revocation: ${r.text}`)
        } else if (step === 1) {
          const body = receiptBody(w * 100_000 + n, { request_id: `cluster-${w * 100_000 + n}`, timestamp: Math.floor(Date.now() / 1000) })
          const { receipt } = signHttpReceiptJson(body, sidecarSigner)
          const r = await call(`${node.url}/v1/receipts/ingest`, { body: { receipts: [{ receipt }] }, headers: auth })
          if (r.status === 200) acknowledged.receipts.push(receipt.id)
          else if (survivor) t.fail(`a survivor answered ${r.status} to an ingest: ${r.text}`)
        } else if (step === 2) {
          const r = await call(`${node.url}/v1/capabilities/issue`, { body: { subjectPublicKey: sidecarSigner.publicKey, scope: { grants: [] }, ttlSeconds: 60 }, headers: auth })
          if (r.status === 200) acknowledged.capabilities.push((r.body as { capability: { id: string } }).capability.id)
          else if (survivor) t.fail(`a survivor answered ${r.status} to an issue: ${r.text}`)
        } else {
          const r = await call(`${node.url}/v1/receipts/query?limit=20`, { headers: auth })
          if (r.status !== 200 && survivor) t.fail(`a survivor answered ${r.status} to a query`)
        }
      } catch (err) {
        // only the killed node may fail to answer
        if (node !== victim) t.fail(`${node.url} did not answer: ${(err as Error).message}`)
        failures.set(node.url, (failures.get(node.url) ?? 0) + 1)
      }
      if (killedAt > 0) afterKill++
    }
  }
  const workers = Array.from({ length: 6 }, (_, w) => worker(w))
  // kill once the load is under way: when enough writes were acknowledged
  await until(async () => acknowledged.revocations.length + acknowledged.receipts.length, count => count >= 30)
  victim.child.kill('SIGKILL')
  killedAt = Date.now()
  t.equal(await victim.exited, 'SIGKILL')
  await Promise.all(workers)
  t.ok(acknowledged.revocations.length > 10 && acknowledged.receipts.length > 10 && acknowledged.capabilities.length > 10, `writes acknowledged: ${JSON.stringify(Object.fromEntries(Object.entries(acknowledged).map(([k, v]) => [k, v.length])))}`)

  // every acknowledged write is in the database
  const revoked = new Set((await stores.revocations.list()).map(r => r.capabilityId))
  t.same(acknowledged.revocations.filter(id => !revoked.has(id)), [], 'every acknowledged revocation is stored')
  const missing: string[] = []
  for (const id of acknowledged.receipts) if ((await stores.receipts.query.getById(id)) === undefined) missing.push(id)
  t.same(missing, [], 'every acknowledged ingested receipt is stored')
  for (const id of acknowledged.capabilities) if ((await stores.capabilities.get(id)) === undefined) missing.push(id)
  t.same(missing, [], 'every acknowledged capability is stored')
  const latest = await stores.receipts.query.latestSeq()
  t.equal(await stores.receipts.query.count(), latest, 'receipt seqs have no gap')

  // the survivors see the dead node go stale, keep quorum (2 of 3) and one leader
  const survivors = nodes.slice(0, 2)
  const views = await Promise.all(survivors.map(node => until(() => health(node), r => clusterOf(r)?.unhealthyPeers === 1)))
  for (const r of views) t.match(clusterOf(r), { peerCount: 2, healthyPeers: 1, unhealthyPeers: 1, hasQuorum: true, reachableNodes: 2, quorumSize: 2 })
  t.equal(new Set(views.map(r => clusterOf(r).leaderUrl)).size, 1, 'the survivors agree on the leader')
  const revocation = await call(`${survivors[1]!.url}/v1/revocations`, { body: { capabilityId: 'cap-after-kill' }, headers: auth })
  t.equal(revocation.status, 200, 'a survivor still takes writes')
})

t.test('without the database: 503 for what needs it, recovery without a restart', { skip }, async t => {
  const node = nodes[0]!
  const before = await call(`${node.url}/v1/receipts/query?limit=1`, { headers: auth })
  t.equal(before.status, 200)
  await server.stop()
  const down = await until(() => health(node), r => r.status === 503 && clusterOf(r)?.hasQuorum === false)
  t.match(down.body, { status: 'unhealthy', stores: { healthy: false }, cluster: { hasQuorum: false, leaderUrl: null, role: 'candidate', reachableNodes: 0 } })
  t.ok(clusterOf(down).lastErrorCount >= 1)
  const write = await call(`${node.url}/v1/revocations`, { body: { capabilityId: 'cap-while-down' }, headers: auth })
  t.equal(write.status, 503, 'a mutating route answers 503 (no quorum)')
  t.match((write.body as { error: string }).error, /no quorum/)
  const read = await call(`${node.url}/v1/receipts/query?limit=1`, { headers: auth })
  t.equal(read.status, 503, 'a read that needs the database answers 503')
  t.same(Object.keys(read.body as object), ['error'])
  t.equal((await call(`${node.url}/v1/receipts/query?limit=1`)).status, 401, 'authentication still comes first')

  await server.start()
  await until(() => health(node), r => r.status === 200 && clusterOf(r)?.hasQuorum === true)
  const after = await call(`${node.url}/v1/revocations`, { body: { capabilityId: 'cap-after-recovery' }, headers: auth })
  t.equal(after.status, 200, 'writes work again, without a restart')
  t.equal((await call(`${node.url}/v1/receipts/query?limit=1`, { headers: auth })).status, 200)
  t.ok((await stores.revocations.list()).some(r => r.capabilityId === 'cap-after-recovery'))
  t.notOk((await stores.revocations.list()).some(r => r.capabilityId === 'cap-while-down'), 'the refused write left nothing behind')
})

