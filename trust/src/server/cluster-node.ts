// One trust-control node of a fleet over a shared PostgreSQL database (docs/postgres.md). Every sync
// interval it writes its heartbeat row and reads the others' (one round trip), which gives it the spec 03
// cluster view: peers fresh within the lease are candidates, the leader is the lowest candidate URL when
// candidates reach the quorum. A node that cannot reach the database sees no peers, so it has no quorum
// and its mutating routes answer 503; the first heartbeat that succeeds again restores it, no restart.
// The heartbeat also notices an authority rotation made elsewhere and reloads the key.
//
// The view is computed when a heartbeat answers, from the peers' ages as the database read them, and
// holds until the next heartbeat, or until the lease since the last successful one runs out (then this
// node vouches for nothing: no quorum). Like a spec 03 peer probe, a heartbeat is the moment of contact:
// a request between heartbeats never re-judges a peer by how long ago this node last looked, which on a
// busy host (timers late, the event loop behind) made live peers look stale and the leadership flap.
//
// Membership (spec 03) is fixed at start: the configured peers, also the peer-auth allowlist. Only with
// discovery asked for (`configuredPeers` undefined) are the nodes seen lately in the heartbeat table the
// membership (docs/postgres.md says what that gives up). A peer whose capability negotiation envelope
// is incompatible is not counted (peer-envelopes.ts).
import type { IncomingMessage } from 'node:http'
import type { GateFeature } from '@gate/sdk'
import { computeCluster, leaseOf, type Leadership, type PeerObservation, type PeerState } from '../cluster.js'
import { createPeerAuthenticator } from '../peer-auth.js'
import type { ClusterBlock, ClusterPort } from '../ports.js'
import type { NodeHeartbeat, PgClusterStore } from '../postgres/pg-cluster-store.js'
import { type HealthReader, PeerEnvelopes } from './peer-envelopes.js'

/** Options of `ClusterNode`. */
export interface ClusterNodeOptions {
  store: Pick<PgClusterStore, 'heartbeat' | 'leave' | 'replicationHeads'>
  /** This node's advertise URL: its node id and the endpoint peer digests are made for. */
  selfUrl: string
  /** The fixed membership and the peer-auth allowlist; undefined takes the nodes seen (discovery). */
  configuredPeers: readonly string[] | undefined
  /** Heartbeat interval (spec 03 default 500: CLUSTER_SYNC_INTERVAL_MS). */
  syncIntervalMs: number
  serviceToken: string
  /** The authority generation this node signs with, and a reload when the database's differs. */
  authorityGeneration: () => number
  refreshAuthority: () => Promise<unknown>
  log: (line: string) => void
  /** Milliseconds, default Date.now; injectable for tests. */
  now?: () => number
  /** The features every peer must accept (its envelope is read from its /health); default none. */
  requiredFeatures?: () => readonly GateFeature[]
  /** How a peer's /health is read; default fetch. */
  readHealth?: HealthReader
}

/** A node's heartbeat loop and its ClusterPort. */
export class ClusterNode implements ClusterPort {
  readonly #options: ClusterNodeOptions
  readonly #now: () => number
  readonly #leaseMs: number
  readonly #freshnessMs: number
  // discovered membership: a node unseen this long is no longer a member
  readonly #retentionMs: number
  readonly #startedAt: number
  readonly #authenticate: (req: IncomingMessage, path: string) => void
  readonly #unlisted = new Set<string>()
  readonly #envelopes: PeerEnvelopes
  #timer: NodeJS.Timeout | undefined
  #beating: Promise<void> | undefined
  #refreshing: Promise<void> | undefined
  #observed: NodeHeartbeat[] = []
  #lastSuccessAt = 0
  #errorCount = 0
  #lastError: string | null = null
  #leadership: Leadership = { leaderUrl: null, term: 0 }
  #view: { block: ClusterBlock; peers: PeerState[] } | undefined

  constructor(options: ClusterNodeOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#startedAt = this.#now()
    const { leaseMs, freshnessMs } = leaseOf(options.syncIntervalMs)
    this.#leaseMs = leaseMs
    this.#freshnessMs = freshnessMs
    this.#retentionMs = Math.max(30_000, 20 * leaseMs)
    this.#envelopes = new PeerEnvelopes({
      required: options.requiredFeatures ?? (() => []),
      log: options.log,
      now: this.#now,
      readHealth: options.readHealth,
      // the same heartbeat's ages, judged again with the peer counted or not
      onChange: () => {
        if (this.#view !== undefined && this.databaseReachable) this.#view = this.#compute(true)
      },
    })
    this.#authenticate = createPeerAuthenticator({
      serviceToken: options.serviceToken,
      selfUrl: options.selfUrl,
      allowlist: () => options.configuredPeers ?? this.#observed.map(n => n.nodeId),
    })
  }

  get leaseMs(): number {
    return this.#leaseMs
  }

  /** True while the last heartbeat succeeded within the lease. */
  get databaseReachable(): boolean {
    return this.#lastSuccessAt > 0 && this.#now() - this.#lastSuccessAt <= this.#leaseMs
  }

  /** The first heartbeat (awaited), then one every sync interval. */
  async start(): Promise<void> {
    await this.beat()
    this.#timer = setInterval(() => void this.beat(), this.#options.syncIntervalMs)
    this.#timer.unref()
  }

  /** One heartbeat; never overlaps the previous one, never throws. */
  beat(): Promise<void> {
    this.#beating ??= this.#beat().finally(() => (this.#beating = undefined))
    return this.#beating
  }

  async #beat(): Promise<void> {
    try {
      const result = await this.#options.store.heartbeat(
        { nodeId: this.#options.selfUrl, startedAt: this.#startedAt, term: this.#leadership.term, authorityGeneration: this.#options.authorityGeneration() },
        this.#retentionMs,
        this.#options.configuredPeers ?? [],
      )
      const wasDown = this.#errorCount > 0
      this.#observed = result.peers
      this.#lastSuccessAt = this.#now()
      this.#errorCount = 0
      this.#lastError = null
      if (wasDown) this.#options.log('cluster: the database is reachable again')
      this.#warnUnlisted(result.peers)
      // not awaited: a peer slow to answer must not hold the heartbeat
      void this.#envelopes.visit(result.peers.filter(p => p.ageMs <= this.#freshnessMs && this.#isMember(p.nodeId)).map(p => p.nodeId))
      this.#view = this.#compute(true)
      // not awaited: a reload waits for a rotation's lock, and heartbeats must go on meanwhile (a node
      // whose heartbeat stalls past the lease loses quorum)
      if (result.authorityGeneration !== this.#options.authorityGeneration()) this.#refreshAuthority()
    } catch (err) {
      if (this.#errorCount === 0) this.#options.log(`cluster: heartbeat failed, no quorum until the database answers again: ${(err as Error).message}`)
      this.#errorCount++
      this.#lastError = (err as Error).message
      // the view of the last good heartbeat holds for its lease; `#current` ends it after that
      if (this.#view !== undefined) this.#view = { ...this.#view, block: { ...this.#view.block, lastErrorCount: this.#errorCount } }
    }
  }

  // A fixed membership counts only its configured peers: another node writing heartbeats to the same
  // database is a misconfiguration worth saying once.
  #warnUnlisted(peers: readonly NodeHeartbeat[]): void {
    const members = this.#options.configuredPeers
    if (members === undefined) return
    for (const peer of peers) {
      if (members.includes(peer.nodeId) || this.#unlisted.has(peer.nodeId) || peer.ageMs > this.#freshnessMs) continue
      this.#unlisted.add(peer.nodeId)
      this.#options.log(
        `warning: cluster: node ${peer.nodeId} writes heartbeats to this database but is not a --cluster-peer of this node: it is not counted in the quorum and its peer requests are refused`,
      )
    }
  }

  #isMember(nodeId: string): boolean {
    return this.#options.configuredPeers === undefined || this.#options.configuredPeers.includes(nodeId)
  }

  #refreshAuthority(): void {
    this.#refreshing ??= this.#options
      .refreshAuthority()
      .then(
        () => undefined,
        (err: Error) => this.#options.log(`cluster: reloading the authority keys failed (the next heartbeat retries): ${err.message}`),
      )
      .finally(() => (this.#refreshing = undefined))
  }

  block(): ClusterBlock {
    return this.#current().block
  }

  authenticatePeer(req: IncomingMessage, path: string): void {
    this.#authenticate(req, path)
  }

  async internalStatus(): Promise<Record<string, unknown>> {
    const { block, peers } = this.#current()
    // every node reads the one database: each peer is at the database's heads, nothing to catch up on
    const heads = await this.#options.store.replicationHeads()
    const cursors = { revocations: heads.revocations, receipts: heads.receipts, toolReceipts: heads.toolReceipts, childReceipts: heads.childReceipts, lineage: heads.capabilities, authorityGeneration: heads.authorityGeneration }
    return {
      nodeId: this.#options.selfUrl,
      cluster: block,
      leaseMs: this.#leaseMs,
      syncIntervalMs: this.#options.syncIntervalMs,
      membership: this.#options.configuredPeers === undefined ? 'discovered' : 'fixed',
      peers: peers.map(p => ({ ...p, cursors: p.health === 'healthy' ? cursors : null })),
      forceSnapshot: false,
      snapshotAppliedCount: 0,
      lastError: this.#lastError,
      replicationHeads: {
        revocation_cursor_version: 1,
        revocation_stream_id: heads.revocationStreamId,
        ...cursors,
      },
    }
  }

  /** Stops the heartbeat and removes this node's row (a graceful stop leaves the membership). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    await this.#beating
    await this.#refreshing
    await this.#options.store.leave(this.#options.selfUrl).catch(() => undefined)
  }

  // The view of the last successful heartbeat while its lease holds; past it, this node reaches no one.
  #current(): { block: ClusterBlock; peers: PeerState[] } {
    if (this.#view !== undefined && this.databaseReachable) return this.#view
    this.#view = this.#compute(false)
    return this.#view
  }

  // Peers are judged by their age as the last heartbeat read it (the database's clock), never by the
  // time since: that is this node's own delay, not theirs.
  #compute(reachable: boolean): { block: ClusterBlock; peers: PeerState[] } {
    // an incompatible peer is not observed: never a candidate
    const observed: PeerObservation[] = this.#observed.filter(n => !this.#envelopes.refused(n.nodeId)).map(n => ({ url: n.nodeId, ageMs: n.ageMs, term: n.term }))
    const result = computeCluster(
      { selfUrl: this.#options.selfUrl, configuredPeers: this.#options.configuredPeers, observed, selfReachable: reachable, freshnessMs: this.#freshnessMs, errorCount: this.#errorCount },
      this.#leadership,
    )
    this.#leadership = result.leadership
    return { block: result.block, peers: result.peers }
  }
}
