// Enrolled signing keys on PostgreSQL (../enrolled-key-store.ts): every node sees a key as soon as any
// node enrolled it.
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
    const created = await this.#db.run('INSERT INTO enrolled_keys (public_key, label, enrolled_at) VALUES ($1, $2, $3) ON CONFLICT (public_key) DO NOTHING', [publicKey, label, this.#now()])
    return { ...(await this.get(publicKey))!, created: created === 1 }
  }

  get(publicKey: string): Promise<EnrolledKey | undefined> {
    return this.#db.get<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys WHERE public_key = $1`, [publicKey])
  }

  list(): Promise<EnrolledKey[]> {
    return this.#db.all<EnrolledKey>(`SELECT ${COLUMNS} FROM enrolled_keys ORDER BY enrolled_at, public_key`)
  }

  /** The pool belongs to the stores. */
  async close(): Promise<void> {}
}
