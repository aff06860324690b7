// The cluster's shared view on PostgreSQL: a heartbeat row per trust-control node (its advertise URL,
// start time, election term and the authority generation it signs with; `last_seen` on the database's
// clock, so node clocks never skew it), and the replication heads the peer status route reports.
import type { PgDatabase } from './pg-database.js'

/** Another node as the heartbeat table shows it. */
export interface NodeHeartbeat {
  nodeId: string
  startedAt: number
  term: number
  authorityGeneration: number
  /** Milliseconds since its last heartbeat, on the database's clock. */
  ageMs: number
}

/** What one heartbeat learned. */
export interface HeartbeatResult {
  /** The other nodes seen within `retentionMs`. */
  peers: NodeHeartbeat[]
  /** The authority's current generation in the database (0 before the first key). */
  authorityGeneration: number
}

/** The heads of the streams a peer would replicate (spec 03, internal cluster status). */
export interface ReplicationHeads {
  revocationStreamId: string
  revocations: number
  receipts: number
  toolReceipts: number
  childReceipts: number
  capabilities: number
  authorityGeneration: number
}

export class PgClusterStore {
  readonly #db: PgDatabase

  constructor(db: PgDatabase) {
    this.#db = db
  }

  /**
   * Records this node's heartbeat and reads the others' (one statement, one round trip): those seen within
   * `retentionMs`, and the `members` whatever their age (a fixed membership reports a long-dead peer as
   * unhealthy, not unknown).
   */
  async heartbeat(self: { nodeId: string; startedAt: number; term: number; authorityGeneration: number }, retentionMs: number, members: readonly string[] = []): Promise<HeartbeatResult> {
    const row = await this.#db.get<{ peers: NodeHeartbeat[] | null; generation: number | null }>(
      `WITH beat AS (
         INSERT INTO cluster_nodes (node_id, started_at, last_seen, term, authority_generation) VALUES ($1, $2, clock_timestamp(), $3, $4)
         ON CONFLICT (node_id) DO UPDATE SET started_at = excluded.started_at, last_seen = excluded.last_seen, term = excluded.term,
           authority_generation = excluded.authority_generation
         RETURNING node_id)
       SELECT
         (SELECT json_agg(json_build_object('nodeId', node_id, 'startedAt', started_at, 'term', term, 'authorityGeneration', authority_generation,
             'ageMs', floor(extract(epoch FROM clock_timestamp() - last_seen) * 1000)) ORDER BY node_id)
           FROM cluster_nodes WHERE node_id <> $1 AND (last_seen > clock_timestamp() - make_interval(secs => $5::double precision / 1000) OR node_id = ANY($6::text[]))) AS peers,
         (SELECT max(generation) FROM authority_keys) AS generation,
         (SELECT count(*) FROM beat) AS beats`,
      [self.nodeId, self.startedAt, self.term, self.authorityGeneration, retentionMs, members],
    )
    return { peers: row?.peers ?? [], authorityGeneration: row?.generation ?? 0 }
  }

  /** Removes this node's row (a graceful stop: it is no longer a member). */
  async leave(nodeId: string): Promise<void> {
    await this.#db.run('DELETE FROM cluster_nodes WHERE node_id = $1', [nodeId])
  }

  async replicationHeads(): Promise<ReplicationHeads> {
    const row = await this.#db.get<ReplicationHeads>(
      `SELECT (SELECT value FROM gate_meta WHERE key = 'revocation_stream_id') AS "revocationStreamId",
        (SELECT coalesce(max(seq), 0) FROM revocations) AS revocations,
        (SELECT coalesce(max(seq), 0) FROM receipt_ids) AS receipts,
        (SELECT count(*) FROM listed_receipts WHERE kind = 'tool') AS "toolReceipts",
        (SELECT count(*) FROM listed_receipts WHERE kind = 'child') AS "childReceipts",
        (SELECT count(*) FROM capabilities) AS capabilities,
        (SELECT coalesce(max(generation), 0) FROM authority_keys) AS "authorityGeneration"`,
    )
    return row!
  }
}
