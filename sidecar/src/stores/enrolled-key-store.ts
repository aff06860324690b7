// Signing keys enrolled with trust-control (`POST /v1/keys/enroll`): the sidecars whose receipts the
// ingest route accepts. A receipt is stored only when its signature verifies under an enrolled key (or
// the authority's own). On SQLite the table lives in the capability store's file, created on first open
// (not part of its revision 1's required schema, so older binaries ignore it); on PostgreSQL it is part
// of migration 1 (@gate/trust's postgres/pg-enrolled-key-store.ts). Both implement @gate/trust's
// EnrolledKeyStore and pass its contract suite.
import { checkEnrolment, type EnrolledKey, type EnrolledKeyStore } from '@gate/trust'
import { openDatabase, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'

const SCHEMA = `CREATE TABLE IF NOT EXISTS enrolled_keys (
  public_key TEXT PRIMARY KEY,
  label TEXT NOT NULL,
  enrolled_at INTEGER NOT NULL
) WITHOUT ROWID`

const COLUMNS = 'public_key AS publicKey, label, enrolled_at AS enrolledAt'

/** Opens the enrolled-key table in the capability store's file at `path`. */
export async function openEnrolledKeyStore(path: string, options: DatabaseOptions & { now: () => number }): Promise<EnrolledKeyStore> {
  const { now, ...database } = options
  const db = await openDatabase(path, database, { store: 'enrolled keys' })
  try {
    await db.exec(SCHEMA)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
  return new SqliteEnrolledKeyStore(db, now)
}

class SqliteEnrolledKeyStore implements EnrolledKeyStore {
  readonly #db: SqliteDatabase
  readonly #now: () => number

  constructor(db: SqliteDatabase, now: () => number) {
    this.#db = db
    this.#now = now
  }

  async enroll(publicKey: string, label: string): Promise<EnrolledKey & { created: boolean }> {
    checkEnrolment(publicKey, label)
    const { changes } = await this.#db.run('INSERT INTO enrolled_keys (public_key, label, enrolled_at) VALUES (?, ?, ?) ON CONFLICT (public_key) DO NOTHING', [publicKey, label, this.#now()])
    return { ...(await this.get(publicKey))!, created: changes === 1 }
  }

  get(publicKey: string): Promise<EnrolledKey | undefined> {
    return this.#db.get<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys WHERE public_key = ?`, [publicKey])
  }

  list(): Promise<EnrolledKey[]> {
    return this.#db.all<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys ORDER BY enrolled_at, public_key`)
  }

  close(): Promise<void> {
    return this.#db.close()
  }
}
