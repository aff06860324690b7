// The revocation store (revision 2). `isRevoked` is on every evaluate's hot path, so it answers
// synchronously from an in-memory set loaded at open; `revoke` commits before it resolves.
import { StoreFailedError, StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { errorText, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'

/** Options of `openRevocationStore`. */
export interface RevocationStoreOptions extends DatabaseOptions {
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
}

/** One revoked capability; `seq` orders revocations (a replication cursor). */
export interface RevocationRecord {
  seq: number
  capabilityId: string
  revokedAt: number
}

/** What `revoke` reports: `newlyRevoked` is false when the capability was already revoked. */
export interface RevokeResult {
  revoked: true
  newlyRevoked: boolean
}

/** Schema revision 2. */
export const REVOCATION_SCHEMA: StoreSchema = Object.freeze({
  store: 'revocations',
  create: [
    `CREATE TABLE revocations (
      seq INTEGER PRIMARY KEY,
      capability_id TEXT NOT NULL UNIQUE,
      revoked_at INTEGER NOT NULL
    )`,
  ],
  migrations: [],
})

/** Opens (creating or migrating) the revocation store and loads every revoked id into memory. */
export async function openRevocationStore(path: string, options: RevocationStoreOptions = {}): Promise<RevocationStore> {
  const { own, database } = pickOptions('revocation store options', options, ['now'])
  checkFunctionOption('revocation store options.now', own.now)
  const db = await openStoreDatabase(REVOCATION_SCHEMA, path, resolveDatabaseOptions(database))
  try {
    const rows = await db.all<{ capability_id: string }>('SELECT capability_id FROM revocations')
    return new RevocationStore(db, new Set(rows.map(row => row.capability_id)), own.now ?? unixNow)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
}

/** Durable capability revocations with a synchronous membership test. */
export class RevocationStore {
  readonly #db: SqliteDatabase
  readonly #revoked: Set<string>
  readonly #now: () => number

  constructor(db: SqliteDatabase, revoked: Set<string>, now: () => number) {
    this.#db = db
    this.#revoked = revoked
    this.#now = now
  }

  get path(): string {
    return this.#db.path
  }

  /** True for an in-memory store (`revocation_backend: ephemeral`). */
  get isEphemeral(): boolean {
    return this.#db.isEphemeral
  }

  /** Number of revoked capabilities. */
  get size(): number {
    return this.#revoked.size
  }

  /** True when `capabilityId` is revoked (in memory; no I/O). */
  isRevoked(capabilityId: string): boolean {
    return this.#revoked.has(capabilityId)
  }

  /** Revokes a capability; resolves once the revocation is committed. */
  async revoke(capabilityId: string): Promise<RevokeResult> {
    if (typeof capabilityId !== 'string' || capabilityId === '') throw new StoreInputError('capabilityId', 'a non-empty string', capabilityId)
    // Fail closed: deny in this process at once, even if the commit below fails (the caller then sees
    // the error and retries; only durability is in doubt, never the denial).
    this.#revoked.add(capabilityId)
    let changes: number
    try {
      ;({ changes } = await this.#db.run(
        'INSERT INTO revocations (capability_id, revoked_at) VALUES (?, ?) ON CONFLICT (capability_id) DO NOTHING',
        [capabilityId, this.#now()],
      ))
    } catch (err) {
      throw new StoreFailedError('revocations', this.path, `cannot record the revocation (${errorText(err)})`, err)
    }
    return { revoked: true, newlyRevoked: changes === 1 }
  }

  /** Every revocation in `seq` order. */
  async list(): Promise<RevocationRecord[]> {
    return this.#db.all<RevocationRecord>(
      'SELECT seq, capability_id AS capabilityId, revoked_at AS revokedAt FROM revocations ORDER BY seq',
    )
  }

  /** Waits for pending writes, then closes the file. */
  close(): Promise<void> {
    return this.#db.close()
  }
}
