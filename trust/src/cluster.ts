// The spec 03 cluster rules over what a node knows of its fleet: quorum size ceil((N-1)/2) + 1 for N
// nodes, peers counted as candidates when fresh, the leader the lexicographically lowest candidate URL
// when candidates reach the quorum (else no leader, role `candidate`, and mutating requests answer 503),
// and the election term: +1 per local leadership change, raised to the highest term a peer carries,
// never lowered. Pure functions: the host (a database heartbeat, docs/postgres.md) supplies the facts.
import type { ClusterBlock } from './ports.js'

/** Another node as last observed. */
export interface PeerObservation {
  url: string
  /** Milliseconds since its last sign of life. */
  ageMs: number
  term: number
}

/** What a node knows when it computes its cluster block. */
export interface ClusterFacts {
  selfUrl: string
  /** The fixed membership (--cluster-peer), or undefined to take the observed nodes as the peers. */
  configuredPeers: readonly string[] | undefined
  /** Other nodes observed recently (the host drops long-gone ones). */
  observed: readonly PeerObservation[]
  /** This node can reach the shared state now; without it, it knows nothing of its peers. */
  selfReachable: boolean
  /** A peer is a candidate when observed within this window (spec 03: the lease in whole seconds, at least 1). */
  freshnessMs: number
  /** Consecutive failed attempts to reach the shared state. */
  errorCount: number
}

/** One peer's state. */
export interface PeerState {
  url: string
  health: 'healthy' | 'unhealthy' | 'unknown'
  lastSeenAgeMs: number | null
  term: number | null
}

/** Leadership carried from one computation to the next. */
export interface Leadership {
  leaderUrl: string | null
  term: number
}

/** spec 03: `peers.len().div_ceil(2) + 1`. */
export function quorumSize(peerCount: number): number {
  return Math.ceil(peerCount / 2) + 1
}

/** spec 03: lease = clamp(3 x sync interval, 500 ms, 5 s); the freshness window is the lease in whole seconds, at least 1 s. */
export function leaseOf(syncIntervalMs: number): { leaseMs: number; freshnessMs: number } {
  const leaseMs = Math.min(5000, Math.max(500, 3 * syncIntervalMs))
  return { leaseMs, freshnessMs: Math.max(1000, Math.floor(leaseMs / 1000) * 1000) }
}

/** The cluster block, each peer's state, and the leadership to carry to the next computation. */
export function computeCluster(facts: ClusterFacts, previous: Leadership): { block: ClusterBlock; peers: PeerState[]; leadership: Leadership } {
  const observed = new Map(facts.observed.filter(p => p.url !== facts.selfUrl).map(p => [p.url, p]))
  const urls = facts.configuredPeers ?? [...observed.keys()]
  const peers: PeerState[] = [...new Set(urls)]
    .filter(url => url !== facts.selfUrl)
    .sort()
    .map(url => {
      const seen = facts.selfReachable ? observed.get(url) : undefined
      if (seen === undefined) return { url, health: 'unknown', lastSeenAgeMs: null, term: null }
      return { url, health: seen.ageMs <= facts.freshnessMs ? 'healthy' : 'unhealthy', lastSeenAgeMs: seen.ageMs, term: seen.term }
    })
  const candidates = [...(facts.selfReachable ? [facts.selfUrl] : []), ...peers.filter(p => p.health === 'healthy').map(p => p.url)].sort()
  const size = quorumSize(peers.length)
  const hasQuorum = candidates.length >= size
  const leaderUrl = hasQuorum ? candidates[0]! : null
  const peerTerm = Math.max(0, ...peers.map(p => p.term ?? 0))
  let term = Math.max(previous.term, peerTerm)
  if (leaderUrl !== previous.leaderUrl) term++
  const count = (health: PeerState['health']) => peers.filter(p => p.health === health).length
  return {
    peers,
    leadership: { leaderUrl, term },
    block: {
      peerCount: peers.length,
      healthyPeers: count('healthy'),
      unhealthyPeers: count('unhealthy'),
      unknownPeers: count('unknown'),
      // every peer is seen through the one shared database: reachable there or not, never partitioned apart
      partitionedPeers: 0,
      lastErrorCount: facts.errorCount,
      selfUrl: facts.selfUrl,
      leaderUrl,
      hasQuorum,
      quorumSize: size,
      reachableNodes: candidates.length,
      role: leaderUrl === null ? 'candidate' : leaderUrl === facts.selfUrl ? 'leader' : 'follower',
      electionTerm: term,
    },
  }
}
