// The revocation store (revision 2). `isRevoked` is on every evaluate's hot path, so it answers
// synchronously from an in-memory set loaded at open; `revoke` commits before it resolves.
// Other processes on the same file (`gate trust serve`, a second sidecar) revoke too: `refresh` asks
// SQLite's `PRAGMA data_version`, which changes only when another connection committed, and then reads
// the rows past the last seq seen. The kernel awaits it before deciding a request that presents a
// capability, so a revocation made elsewhere is honoured on the next such request, no restart.
//
// Before asking SQLite it looks at the file's write-ahead log: every commit to the file, by any
// connection, writes there (the stores run in WAL mode), so while the log's size, times and inode are
// what they were at the last completed check, nobody committed and the PRAGMA is skipped. On sqlite3
// that PRAGMA is a round trip to libuv's pool per request presenting a capability (30-50 µs of CPU
// alone, more with the thread wake-ups in place); the stat is a few µs on the event loop. SQLite is
// still asked at least once a second, for a file system whose times are coarse.
import { statSync, type BigIntStats } from 'node:fs'
import type { RevocationRecord, RevokeResult, TrustRevocationStore } from '@gate/trust'
import { StoreFailedError, StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { errorText, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'

/** Options of `openRevocationStore`. */
export interface RevocationStoreOptions extends DatabaseOptions {
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
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
    const version = await readDataVersion(db)
    const rows = await db.all<{ seq: number; capability_id: string }>('SELECT seq, capability_id FROM revocations')
    const lastSeq = rows.reduce((max, row) => Math.max(max, row.seq), 0)
    return new RevocationStore(db, new Set(rows.map(row => row.capability_id)), own.now ?? unixNow, { version, lastSeq })
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
}

const RESOLVED = Promise.resolve()

/** SQLite is asked at least this often even while the write-ahead log looks untouched. */
const MAX_UNCHECKED_MS = 1000

/** The write-ahead log's stat, or undefined when there is none (SQLite removes it when the last connection closes). */
function walStat(path: string): BigIntStats | undefined {
  try {
    return statSync(`${path}-wal`, { bigint: true, throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

async function readDataVersion(db: SqliteDatabase): Promise<number> {
  return (await db.get<{ data_version: number }>('PRAGMA data_version'))?.data_version ?? 0
}

/** Durable capability revocations with a synchronous membership test. */
export class RevocationStore implements TrustRevocationStore {
  readonly #db: SqliteDatabase
  readonly #revoked: Set<string>
  readonly #now: () => number
  // what was read: the connection's data_version then, and the highest seq
  #version: number
  #lastSeq: number
  // one check at a time; a caller arriving while one runs waits for the next (it must see commits
  // made before it asked), which every caller arriving meanwhile shares
  #running: Promise<void> | undefined
  #queued: Promise<void> | undefined
  // the write-ahead log as the last completed check found it, and when that check started
  #checkedLog: BigIntStats | undefined
  #checkedAt = -Infinity
  readonly #listeners = new Set<(capabilityId: string) => void>()

  constructor(db: SqliteDatabase, revoked: Set<string>, now: () => number, seen: { version: number; lastSeq: number } = { version: 0, lastSeq: 0 }) {
    this.#db = db
    this.#revoked = revoked
    this.#now = now
    this.#version = seen.version
    this.#lastSeq = seen.lastSeq
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

  /**
   * Loads revocations other connections committed since the last look. Cheap when there are none
   * (one PRAGMA). Rejects with gate_store_failed when the file cannot be read (callers fail closed).
   */
  refresh(): Promise<void> {
    if (this.#db.isEphemeral) return RESOLVED
    if (this.#running === undefined && this.#logUnchanged()) return RESOLVED
    if (this.#queued !== undefined) return this.#queued
    if (this.#running !== undefined) {
      this.#queued = this.#running.then(
        () => this.#start(),
        () => this.#start(),
      )
      return this.#queued
    }
    return this.#start()
  }

  // True when nothing was committed to the file since the last completed check started (see the header).
  #logUnchanged(): boolean {
    const seen = this.#checkedLog
    if (seen === undefined || performance.now() - this.#checkedAt >= MAX_UNCHECKED_MS) return false
    const now = walStat(this.path)
    return now !== undefined && now.size === seen.size && now.mtimeNs === seen.mtimeNs && now.ctimeNs === seen.ctimeNs && now.ino === seen.ino
  }

  #start(): Promise<void> {
    this.#queued = undefined
    // read before the check: whatever was committed by then, the check sees
    const log = walStat(this.path)
    const startedAt = performance.now()
    const run = this.#check()
      .then(() => {
        this.#checkedLog = log
        this.#checkedAt = startedAt
      })
      .finally(() => {
        if (this.#running === run) this.#running = undefined
      })
    this.#running = run
    return run
  }

  async #check(): Promise<void> {
    try {
      const version = await readDataVersion(this.#db)
      if (version === this.#version) return
      const rows = await this.#db.all<{ seq: number; capability_id: string }>('SELECT seq, capability_id FROM revocations WHERE seq > ?', [this.#lastSeq])
      for (const row of rows) {
        const known = this.#revoked.has(row.capability_id)
        this.#revoked.add(row.capability_id)
        if (row.seq > this.#lastSeq) this.#lastSeq = row.seq
        if (!known) this.#notify(row.capability_id)
      }
      this.#version = version
    } catch (err) {
      throw new StoreFailedError('revocations', this.path, `cannot read revocations (${errorText(err)})`, err)
    }
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
    if (changes === 1) this.#notify(capabilityId)
    return { revoked: true, newlyRevoked: changes === 1 }
  }

  /** Calls `listener` with each id newly revoked here (after its commit) or found by `refresh`; returns an unsubscribe. */
  onRevoked(listener: (capabilityId: string) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #notify(capabilityId: string): void {
    for (const listener of this.#listeners) listener(capabilityId)
  }

  /** Up to `limit` revocations with seq > `afterSeq`, in seq order (the revocation feed). */
  async listAfter(afterSeq: number, limit: number): Promise<RevocationRecord[]> {
    return this.#db.all<RevocationRecord>(
      'SELECT seq, capability_id AS capabilityId, revoked_at AS revokedAt FROM revocations WHERE seq > ? ORDER BY seq LIMIT ?',
      [afterSeq, limit],
    )
  }

  /** The highest seq (0 when empty). */
  async latestSeq(): Promise<number> {
    return (await this.#db.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM revocations'))?.seq ?? 0
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
