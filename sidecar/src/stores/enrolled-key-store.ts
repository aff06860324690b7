// Signing keys enrolled with trust-control (`POST /v1/keys/enroll`): the sidecars whose receipts the
// ingest route accepts. A receipt is stored only when its signature verifies under an enrolled key (or
// the authority's own). On SQLite the table lives in the capability store's file, created on first open
// (not part of its revision 1's required schema, so older binaries ignore it); on PostgreSQL it is part
// of migration 1 (postgres/pg-enrolled-key-store.ts).
import { StoreInputError } from '../errors.js'
import { openDatabase, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'

/** One enrolled signing key. */
export interface EnrolledKey {
  publicKey: string
  /** Who it belongs to (a sidecar's name), as given at enrolment. */
  label: string
  /** Unix seconds. */
  enrolledAt: number
}

/** What both backends provide. */
export interface EnrolledKeyStore {
  /** Enrols `publicKey`; a key already enrolled keeps its first label and time (`created: false`). */
  enroll(publicKey: string, label: string): Promise<EnrolledKey & { created: boolean }>
  get(publicKey: string): Promise<EnrolledKey | undefined>
  list(): Promise<EnrolledKey[]>
  close(): Promise<void>
}

/** Public keys as receipts write `kernel_key`: 64 hex (Ed25519) or the P-256/P-384 wire forms. */
export const ENROLLED_KEY = /^(?:[0-9a-f]{64}|p256:04[0-9a-f]{128}|p384:04[0-9a-f]{192})$/
const LABEL = /^[\x21-\x7e][\x20-\x7e]{0,127}$/

/** Refuses a key or label the table would not hold. */
export function checkEnrolment(publicKey: unknown, label: unknown): void {
  if (typeof publicKey !== 'string' || !ENROLLED_KEY.test(publicKey)) throw new StoreInputError('publicKey', 'a hex Ed25519 public key (64 lowercase hex characters)', publicKey)
  if (typeof label !== 'string' || !LABEL.test(label)) throw new StoreInputError('label', '1-128 printable ASCII characters', label)
}

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
