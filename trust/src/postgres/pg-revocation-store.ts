// Revocations on PostgreSQL. Each new revocation takes the next version of the revocation stream (seq,
// consecutive, visible in commit order) under a transaction advisory lock, so a mirror reading
// `seq > cursor` (a sidecar's local copy) never skips one, whichever node wrote it. Revoking twice is
// idempotent: the second call changes nothing and says so. A new revocation notifies REVOCATION_CHANNEL
// in its transaction, so every node's listener hears of it when it commits (pg-notifications.ts).
import { StoreInputError } from '../errors.js'
import type { RevocationRecord, RevokeResult, TrustRevocationStore } from '../store-ports.js'
import type { PgDatabase } from './pg-database.js'
import { REVOCATION_CHANNEL, type PgNotificationListener } from './pg-notifications.js'
import { REVOCATION_LOCK } from './pg-locks.js'

export class PgRevocationStore implements TrustRevocationStore {
  readonly #db: PgDatabase
  readonly #feed: PgDatabase
  readonly #now: () => number
  readonly #listener: PgNotificationListener | undefined

  /**
   * `feed` serves the stream's reads (listAfter, latestSeq: the sidecars' feed), a pool of its own;
   * `listener` listens on REVOCATION_CHANNEL (`watch`).
   */
  constructor(db: PgDatabase, now: () => number, feed: PgDatabase = db, listener?: PgNotificationListener) {
    this.#db = db
    this.#feed = feed
    this.#now = now
    this.#listener = listener
  }

  /** Calls `listener` when a revocation commits on any node (and after the listen connection was lost). */
  watch(listener: () => void): () => void {
    return this.#listener?.subscribe(listener) ?? (() => undefined)
  }

  get isEphemeral(): boolean {
    return false
  }

  /** Revokes a capability; resolves once committed. */
  async revoke(capabilityId: string): Promise<RevokeResult> {
    if (typeof capabilityId !== 'string' || capabilityId === '') throw new StoreInputError('capabilityId', 'a non-empty string', capabilityId)
    const revokedAt = this.#now()
    const inserted = await this.#db.transaction(async tx => {
      if ((await tx.get('SELECT 1 FROM revocations WHERE capability_id = $1', [capabilityId])) !== undefined) return 0
      await tx.get('SELECT pg_advisory_xact_lock($1)', [REVOCATION_LOCK.toString()])
      const added = await tx.run(
        `INSERT INTO revocations (seq, capability_id, revoked_at)
         SELECT coalesce(max(seq), 0) + 1, $1, $2 FROM revocations
         ON CONFLICT (capability_id) DO NOTHING`,
        [capabilityId, revokedAt],
      )
      // delivered by PostgreSQL at COMMIT, never before: a listener that looks finds the row
      if (added === 1) await tx.get('SELECT pg_notify($1, $2)', [REVOCATION_CHANNEL, capabilityId])
      return added
    })
    return { revoked: true, newlyRevoked: inserted === 1 }
  }

  /** True when `capabilityId` is revoked (a read of the database). */
  async isRevoked(capabilityId: string): Promise<boolean> {
    return (await this.#db.get('SELECT 1 FROM revocations WHERE capability_id = $1', [capabilityId])) !== undefined
  }

  /** Up to `limit` revocations with seq > `afterSeq`, in seq order (the revocation stream). */
  async listAfter(afterSeq: number, limit: number): Promise<RevocationRecord[]> {
    return this.#feed.all<RevocationRecord>('SELECT seq, capability_id AS "capabilityId", revoked_at AS "revokedAt" FROM revocations WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit])
  }

  /** Every revocation in seq order. */
  async list(): Promise<RevocationRecord[]> {
    return this.#db.all<RevocationRecord>('SELECT seq, capability_id AS "capabilityId", revoked_at AS "revokedAt" FROM revocations ORDER BY seq')
  }

  /** The stream's newest version (0 when empty). */
  async latestSeq(): Promise<number> {
    return (await this.#feed.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM revocations'))?.seq ?? 0
  }
}
