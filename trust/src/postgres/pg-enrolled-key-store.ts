// Enrolled signing keys on PostgreSQL (../enrolled-key-store.ts): every node sees a key as soon as any
// node enrolled it. Rows are keyed by the key text's SHA-256 (a hybrid key is too wide for a B-tree
// entry: migration 5); lookups compare the text as well.
import { sha256Hex } from '@gate/sdk'
import type { EnrolledKey, EnrolledKeyStore } from '../store-ports.js'
import { checkEnrolment } from '../stores/store-input.js'
import type { PgDatabase } from './pg-database.js'

const COLUMNS = 'public_key AS "publicKey", label, enrolled_at AS "enrolledAt"'

export class PgEnrolledKeyStore implements EnrolledKeyStore {
  readonly #db: PgDatabase
  readonly #now: () => number

  constructor(db: PgDatabase, now: () => number) {
    this.#db = db
    this.#now = now
  }

  async enroll(publicKey: string, label: string): Promise<EnrolledKey & { created: boolean }> {
    checkEnrolment(publicKey, label)
    const created = await this.#db.run('INSERT INTO enrolled_keys (key_hash, public_key, label, enrolled_at) VALUES ($1, $2, $3, $4) ON CONFLICT (key_hash) DO NOTHING', [sha256Hex(publicKey), publicKey, label, this.#now()])
    return { ...(await this.get(publicKey))!, created: created === 1 }
  }

  get(publicKey: string): Promise<EnrolledKey | undefined> {
    return this.#db.get<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys WHERE key_hash = $1 AND public_key = $2`, [sha256Hex(publicKey), publicKey])
  }

  list(): Promise<EnrolledKey[]> {
    return this.#db.all<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys ORDER BY enrolled_at, public_key`)
  }

  /** The pool belongs to the stores. */
  async close(): Promise<void> {}
}
