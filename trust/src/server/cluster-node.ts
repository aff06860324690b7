// One trust-control node of a fleet over a shared PostgreSQL database (docs/postgres.md). Every sync
// interval it writes its heartbeat row and reads the others' (one round trip), which gives it the spec 03
// cluster view: peers fresh within the lease are candidates, the leader is the lowest candidate URL when
// candidates reach the quorum. A node that cannot reach the database sees no peers, so it has no quorum
// and its mutating routes answer 503; the first heartbeat that succeeds again restores it, no restart.
// The heartbeat also notices an authority rotation made elsewhere and reloads the key.
import type { IncomingMessage } from 'node:http'
import { computeCluster, leaseOf, type Leadership, type PeerObservation, type PeerState } from '../cluster.js'
import { createPeerAuthenticator } from '../peer-auth.js'
import type { ClusterBlock, ClusterPort } from '../ports.js'
import type { NodeHeartbeat, PgClusterStore } from '../postgres/pg-cluster-store.js'

/** Options of `ClusterNode`. */
export interface ClusterNodeOptions {
  store: PgClusterStore
  /** This node's advertise URL: its node id and the endpoint peer digests are made for. */
  selfUrl: string
  /** The fixed membership and the peer-auth allowlist; undefined takes the nodes seen. */
  configuredPeers: readonly string[] | undefined
  /** Heartbeat interval (spec 03 default 500: CLUSTER_SYNC_INTERVAL_MS). */
  syncIntervalMs: number
  serviceToken: string
  /** The authority generation this node signs with, and a reload when the database's differs. */
  authorityGeneration: () => number
  refreshAuthority: () => Promise<unknown>
  log: (line: string) => void
}

/** A node's heartbeat loop and its ClusterPort. */
export class ClusterNode implements ClusterPort {
  readonly #options: ClusterNodeOptions
  readonly #leaseMs: number
  readonly #freshnessMs: number
  // unconfigured membership: a node unseen this long is no longer a member
  readonly #retentionMs: number
  readonly #startedAt = Date.now()
  readonly #authenticate: (req: IncomingMessage, path: string) => void
  #timer: NodeJS.Timeout | undefined
  #beating: Promise<void> | undefined
  #refreshing: Promise<void> | undefined
  #observed: NodeHeartbeat[] = []
  #observedAt = 0
  #lastSuccessAt = 0
  #errorCount = 0
  #lastError: string | null = null
  #leadership: Leadership = { leaderUrl: null, term: 0 }

  constructor(options: ClusterNodeOptions) {
    this.#options = options
    const { leaseMs, freshnessMs } = leaseOf(options.syncIntervalMs)
    this.#leaseMs = leaseMs
    this.#freshnessMs = freshnessMs
    this.#retentionMs = Math.max(30_000, 20 * leaseMs)
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
    return this.#lastSuccessAt > 0 && Date.now() - this.#lastSuccessAt <= this.#leaseMs
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
    const { leadership } = this.#compute()
    try {
      const result = await this.#options.store.heartbeat(
        { nodeId: this.#options.selfUrl, startedAt: this.#startedAt, term: leadership.term, authorityGeneration: this.#options.authorityGeneration() },
        this.#retentionMs,
      )
      const wasDown = this.#errorCount > 0
      this.#observed = result.peers
      this.#observedAt = this.#lastSuccessAt = Date.now()
      this.#errorCount = 0
      this.#lastError = null
      if (wasDown) this.#options.log('cluster: the database is reachable again')
      // not awaited: a reload waits for a rotation's lock, and heartbeats must go on meanwhile (a node
      // whose heartbeat stalls past the lease loses quorum)
      if (result.authorityGeneration !== this.#options.authorityGeneration()) this.#refreshAuthority()
    } catch (err) {
      if (this.#errorCount === 0) this.#options.log(`cluster: heartbeat failed, no quorum until the database answers again: ${(err as Error).message}`)
      this.#errorCount++
      this.#lastError = (err as Error).message
    }
    this.#compute()
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
    return this.#compute().block
  }

  authenticatePeer(req: IncomingMessage, path: string): void {
    this.#authenticate(req, path)
  }

  async internalStatus(): Promise<Record<string, unknown>> {
    const { block, peers } = this.#compute()
    // every node reads the one database: each peer is at the database's heads, nothing to catch up on
    const heads = await this.#options.store.replicationHeads()
    const cursors = { revocations: heads.revocations, receipts: heads.receipts, toolReceipts: heads.toolReceipts, childReceipts: heads.childReceipts, lineage: heads.capabilities, authorityGeneration: heads.authorityGeneration }
    return {
      nodeId: this.#options.selfUrl,
      cluster: block,
      leaseMs: this.#leaseMs,
      syncIntervalMs: this.#options.syncIntervalMs,
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

  #compute(): { block: ClusterBlock; peers: PeerState[]; leadership: Leadership } {
    const elapsed = Date.now() - this.#observedAt
    const observed: PeerObservation[] = this.#observed.map(n => ({ url: n.nodeId, ageMs: n.ageMs + elapsed, term: n.term }))
    const result = computeCluster(
      { selfUrl: this.#options.selfUrl, configuredPeers: this.#options.configuredPeers, observed, selfReachable: this.databaseReachable, freshnessMs: this.#freshnessMs, errorCount: this.#errorCount },
      this.#leadership,
    )
    this.#leadership = result.leadership
    return result
  }
}
