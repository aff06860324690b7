// The cluster view of a node (spec 03 lease and freshness) is judged at each heartbeat, from the peers'
// ages as the database read them, and holds until the next heartbeat or the end of the lease: a request
// between heartbeats does not re-judge peers by this node's own delay, so a late timer on a busy host no
// longer flips the leader and raises the term. The heartbeat table is a double (the real one is in
// trust-serve-cluster.test.ts and trust-serve-membership.test.ts); the clock is injected. A peer whose
// capability negotiation envelope (its /health, a double here) is incompatible is not counted.
import t from 'tap'
import type { HeartbeatResult, NodeHeartbeat } from '../postgres/pg-cluster-store.js'
import { ClusterNode } from './cluster-node.js'

const SELF = 'http://a:9091'
const B = 'http://b:9091'
const C = 'http://c:9091'

const ENVELOPE = { schema: 'gate.capabilities.v1', features: { accepts_anchor_batch_v1: false, accepts_hybrid_signatures: true, delegation_chain_binding: true } }

function node(options: { peers?: readonly string[] | undefined; answers: (() => HeartbeatResult)[]; health?: Record<string, unknown> }) {
  let now = 1_000_000
  const lines: string[] = []
  const beats: { members: readonly string[] }[] = []
  const store = {
    async heartbeat(_self: unknown, _retentionMs: number, members: readonly string[] = []) {
      beats.push({ members })
      const next = options.answers.shift()
      if (next === undefined) throw new Error('connect ECONNREFUSED')
      return next()
    },
    async leave() {},
    async replicationHeads() {
      return { revocationStreamId: 'x', revocations: 0, receipts: 0, toolReceipts: 0, childReceipts: 0, capabilities: 0, authorityGeneration: 1 }
    },
  }
  const cluster = new ClusterNode({
    store,
    selfUrl: SELF,
    configuredPeers: 'peers' in options ? options.peers : [B, C],
    syncIntervalMs: 500,
    serviceToken: 'cluster-node-token-0123456789',
    authorityGeneration: () => 1,
    refreshAuthority: async () => undefined,
    log: line => lines.push(line),
    now: () => now,
    // every peer's /health: unreachable unless the test gives one
    readHealth: async url => {
      const body = options.health?.[url]
      if (body === undefined) throw new Error('connect ECONNREFUSED')
      return { status: 200, body }
    },
  })
  return { cluster, lines, beats, advance: (ms: number) => (now += ms) }
}

const peer = (nodeId: string, ageMs: number, term = 0): NodeHeartbeat => ({ nodeId, startedAt: 1, term, authorityGeneration: 1, ageMs })
const answer = (...peers: NodeHeartbeat[]) => () => ({ peers, authorityGeneration: 1 })

t.test('between heartbeats the view holds: a peer read 900 ms old stays healthy 400 ms later, and the term does not move', async t => {
  // lease 1500 ms (3 x 500), freshness 1000 ms (the lease in whole seconds)
  const { cluster, advance } = node({ answers: [answer(peer(B, 900), peer(C, 200))] })
  await cluster.beat()
  const first = cluster.block()
  t.match(first, { hasQuorum: true, healthyPeers: 2, leaderUrl: SELF, role: 'leader', quorumSize: 2, reachableNodes: 3 })
  advance(400)
  const later = cluster.block()
  t.match(later, { healthyPeers: 2, leaderUrl: SELF }, 'judged on the age the database read (900 ms), not 900 + 400')
  t.equal(later.electionTerm, first.electionTerm, 'no leadership change, no new term')
  for (let i = 0; i < 10; i++) cluster.block()
  t.equal(cluster.block().electionTerm, first.electionTerm, 'asking again changes nothing')
})

t.test('a peer the heartbeat read past the freshness window is unhealthy; the next heartbeat restores it', async t => {
  const { cluster, advance } = node({ answers: [answer(peer(B, 1200), peer(C, 100)), answer(peer(B, 300), peer(C, 100))] })
  await cluster.beat()
  t.match(cluster.block(), { healthyPeers: 1, unhealthyPeers: 1, hasQuorum: true })
  advance(500)
  await cluster.beat()
  t.match(cluster.block(), { healthyPeers: 2, unhealthyPeers: 0 })
})

t.test('past the lease without a successful heartbeat the node has no quorum; a failed heartbeat within it changes nothing', async t => {
  const { cluster, advance, lines } = node({ answers: [answer(peer(B, 100), peer(C, 100))] })
  await cluster.beat()
  const term = cluster.block().electionTerm
  advance(500)
  await cluster.beat()
  t.match(cluster.block(), { hasQuorum: true, lastErrorCount: 1, electionTerm: term }, 'one failed heartbeat within the lease: the view holds')
  advance(1001)
  t.match(cluster.block(), { hasQuorum: false, leaderUrl: null, role: 'candidate', reachableNodes: 0, unknownPeers: 2 }, 'past the lease: no quorum')
  t.equal(cluster.block().electionTerm, term + 1, 'one leadership change, counted once')
  t.match(lines, [/heartbeat failed/])
})

t.test('a fixed membership counts only its configured peers and names another node writing heartbeats once', async t => {
  const stranger = 'http://d:9091'
  const { cluster, lines, beats } = node({ answers: [answer(peer(B, 100), peer(stranger, 100)), answer(peer(B, 100), peer(stranger, 100))] })
  await cluster.beat()
  await cluster.beat()
  t.match(cluster.block(), { peerCount: 2, healthyPeers: 1, unknownPeers: 1, hasQuorum: true })
  t.same(beats[0]!.members, [B, C], 'the heartbeat reads the members whatever their age')
  t.equal(lines.filter(l => l.includes(stranger)).length, 1, 'the stranger is named once')
  t.match(lines[0], /warning: cluster: node http:\/\/d:9091 writes heartbeats to this database but is not a --cluster-peer/)
})

t.test('no configured peer: a cluster of one; discovery counts the nodes the table shows', async t => {
  const alone = node({ peers: [], answers: [answer(peer(B, 100))] })
  await alone.cluster.beat()
  t.match(alone.cluster.block(), { peerCount: 0, quorumSize: 1, hasQuorum: true, leaderUrl: SELF })
  const discovered = node({ peers: undefined, answers: [answer(peer(B, 100), peer(C, 100)), answer()] })
  await discovered.cluster.beat()
  t.match(discovered.cluster.block(), { peerCount: 2, quorumSize: 2 })
  await discovered.cluster.beat()
  t.match(discovered.cluster.block(), { peerCount: 0, quorumSize: 1, hasQuorum: true, leaderUrl: SELF }, 'peers gone from the table are gone from a discovered membership: the survivor leads alone')
})

t.test('a peer whose envelope is incompatible is not counted; one unreachable or compatible is', async t => {
  const heartbeats = Array.from({ length: 3 }, () => answer(peer(B, 100), peer(C, 100)))
  const health = { [B]: { status: 'healthy', capabilities: { schema: 'gate.capabilities.v2', features: {} } }, [C]: { status: 'healthy', capabilities: ENVELOPE } }
  const { cluster, lines } = node({ answers: heartbeats, health })
  await cluster.beat()
  // the envelope reads run beside the heartbeat: one turn of the event loop ends them (the double answers at once)
  await new Promise(resolve => setImmediate(resolve))
  await cluster.beat()
  t.match(cluster.block(), { healthyPeers: 1, unknownPeers: 1, hasQuorum: true, reachableNodes: 2 }, 'B is not counted')
  t.match(lines, [/^cluster: gate_incompatible_peer: cluster peer http:\/\/b:9091: unsupported capabilities schema "gate.capabilities.v2"/])
  const unread = node({ answers: [answer(peer(B, 100), peer(C, 100))] })
  await unread.cluster.beat()
  await new Promise(resolve => setImmediate(resolve))
  t.match(unread.cluster.block(), { healthyPeers: 2 }, 'peers whose /health cannot be read count by their heartbeat')
})
