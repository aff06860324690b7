// The execution-nonce store (revision 1). A nonce is issued with the evaluate answer and consumed when
// the request executes: once, before it expires, by the same caller, method, route and content. Both go
// through group commit (issuing is on the evaluate hot path); consumption is one conditional UPDATE
// inside the writer's transaction, so it is single-use even with another process on the file.
import { DuplicateRecordError, StoreInputError } from '../errors.js'
import type { RequestBindings } from '@gate/trust'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase, type SqliteExecutor } from './sqlite-driver.js'
import { TransactionalStore } from './transactional-store.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'

/** Options of `openNonceStore`. */
export interface NonceStoreOptions extends DatabaseOptions {
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
  /** Largest group-commit batch, default 512. */
  maxBatchSize?: number
}

/** A nonce to record. `expiresAt` is Unix seconds; the nonce is expired from that second on. */
export interface NewNonce extends RequestBindings {
  nonceId: string
  requestId: string
  expiresAt: number
}

/** Why a nonce was refused. */
export type NonceRefusal = 'unknown' | 'used' | 'expired' | 'mismatch'

/** What `consume` decided. */
export type NonceConsumeResult = { ok: true; requestId: string } | { ok: false; reason: NonceRefusal }

/** Schema revision 1. */
export const NONCE_SCHEMA: StoreSchema = Object.freeze({
  store: 'nonces',
  create: [
    `CREATE TABLE nonces (
      nonce_id TEXT PRIMARY KEY,
      request_id TEXT NOT NULL,
      caller_identity_hash TEXT NOT NULL,
      method TEXT NOT NULL,
      route_pattern TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      used_at INTEGER
    ) WITHOUT ROWID`,
    'CREATE INDEX nonces_by_expiry ON nonces (expires_at)',
  ],
  migrations: [],
})

type NonceWrite =
  | { type: 'issue'; nonce: NewNonce }
  | { type: 'consume'; nonceId: string; bindings: RequestBindings; now: number }
  | { type: 'purge'; before: number }

type NonceWriteResult = { type: 'issued'; duplicate: boolean } | { type: 'consumed'; result: NonceConsumeResult } | { type: 'purged'; count: number }

/** Opens (creating or migrating) the nonce store. */
export async function openNonceStore(path: string, options: NonceStoreOptions = {}): Promise<NonceStore> {
  const { own, database } = pickOptions('nonce store options', options, ['now', 'maxBatchSize'])
  checkFunctionOption('nonce store options.now', own.now)
  const db = await openStoreDatabase(NONCE_SCHEMA, path, resolveDatabaseOptions(database))
  return new NonceStore(db, own.now ?? unixNow, own.maxBatchSize)
}

/** Durable single-use execution nonces. */
export class NonceStore extends TransactionalStore<NonceWrite, NonceWriteResult> {
  readonly #now: () => number

  constructor(db: SqliteDatabase, now: () => number, maxBatchSize?: number) {
    super(db, 'nonces', 'nonce update', commitWrites, maxBatchSize)
    this.#now = now
  }

  /** Records a nonce; resolves after commit. A taken id is DuplicateRecordError (gate_conflict). */
  async issue(nonce: NewNonce): Promise<void> {
    for (const field of ['nonceId', 'requestId', 'callerIdentityHash', 'method', 'routePattern', 'contentHash'] as const) {
      if (typeof nonce[field] !== 'string' || nonce[field] === '') throw new StoreInputError(field, 'a non-empty string', nonce[field])
    }
    if (!Number.isSafeInteger(nonce.expiresAt) || nonce.expiresAt < 0) throw new StoreInputError('expiresAt', 'Unix seconds', nonce.expiresAt)
    const result = await this.queue.enqueue({ type: 'issue', nonce: { ...nonce } })
    if (result.type === 'issued' && result.duplicate) throw new DuplicateRecordError('nonces', nonce.nonceId)
  }

  /** Consumes a nonce once: ok with its request id, or the reason it was refused. Resolves after commit. */
  async consume(nonceId: string, bindings: RequestBindings, now: number = this.#now()): Promise<NonceConsumeResult> {
    if (typeof nonceId !== 'string' || nonceId === '') return { ok: false, reason: 'unknown' }
    const result = await this.queue.enqueue({
      type: 'consume',
      nonceId,
      bindings: {
        callerIdentityHash: bindings.callerIdentityHash,
        method: bindings.method,
        routePattern: bindings.routePattern,
        contentHash: bindings.contentHash,
      },
      now,
    })
    return result.type === 'consumed' ? result.result : { ok: false, reason: 'unknown' }
  }

  /** Deletes nonces that expired at or before `before` (used or not); returns how many. */
  async deleteExpired(before: number = this.#now()): Promise<number> {
    const result = await this.queue.enqueue({ type: 'purge', before })
    return result.type === 'purged' ? result.count : 0
  }
}

async function commitWrites(tx: SqliteExecutor, writes: readonly NonceWrite[]): Promise<NonceWriteResult[]> {
  const results: NonceWriteResult[] = []
  for (const write of writes) {
    if (write.type === 'issue') {
      const { nonce } = write
      const { changes } = await tx.run(
        `INSERT INTO nonces (nonce_id, request_id, caller_identity_hash, method, route_pattern, content_hash, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (nonce_id) DO NOTHING`,
        [nonce.nonceId, nonce.requestId, nonce.callerIdentityHash, nonce.method, nonce.routePattern, nonce.contentHash, nonce.expiresAt],
      )
      results.push({ type: 'issued', duplicate: changes !== 1 })
    } else if (write.type === 'purge') {
      const { changes } = await tx.run('DELETE FROM nonces WHERE expires_at <= ?', [write.before])
      results.push({ type: 'purged', count: changes })
    } else {
      results.push({ type: 'consumed', result: await consumeOne(tx, write.nonceId, write.bindings, write.now) })
    }
  }
  return results
}

async function consumeOne(tx: SqliteExecutor, nonceId: string, bindings: RequestBindings, now: number): Promise<NonceConsumeResult> {
  const used = await tx.get<{ request_id: string }>(
    `UPDATE nonces SET used_at = ?
     WHERE nonce_id = ? AND used_at IS NULL AND expires_at > ?
       AND caller_identity_hash = ? AND method = ? AND route_pattern = ? AND content_hash = ?
     RETURNING request_id`,
    [now, nonceId, now, bindings.callerIdentityHash, bindings.method, bindings.routePattern, bindings.contentHash],
  )
  if (used !== undefined) return { ok: true, requestId: used.request_id }
  // Refused: say why, in this order (a used nonce stays "used" after it expires).
  const row = await tx.get<{ used_at: number | null; expires_at: number; caller_identity_hash: string; method: string; route_pattern: string; content_hash: string }>(
    'SELECT used_at, expires_at, caller_identity_hash, method, route_pattern, content_hash FROM nonces WHERE nonce_id = ?',
    [nonceId],
  )
  if (row === undefined) return { ok: false, reason: 'unknown' }
  if (row.used_at !== null) return { ok: false, reason: 'used' }
  if (row.expires_at <= now) return { ok: false, reason: 'expired' }
  return { ok: false, reason: 'mismatch' }
}
