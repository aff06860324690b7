// Capability tokens this authority issued (revision 1), so a request may name one by `capability_id`
// instead of presenting it, and trust-control can resolve an agent's subject key through the lineage.
// Tokens are stored exactly as serialized at issuance.
import type { TrustCapabilityStore } from '@gate/trust'
import type { CapabilityToken } from '@gate/sdk'
import { StoreFailedError, StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { errorText, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { pickOptions } from './store-options.js'

export type CapabilityStoreOptions = DatabaseOptions

/** Schema revision 1. */
export const CAPABILITY_SCHEMA: StoreSchema = Object.freeze({
  store: 'capabilities',
  create: [
    `CREATE TABLE capabilities (
      capability_id TEXT PRIMARY KEY,
      subject TEXT NOT NULL,
      issuer TEXT NOT NULL,
      issued_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      token_json TEXT NOT NULL
    ) WITHOUT ROWID`,
  ],
  migrations: [],
})

export async function openCapabilityStore(path: string, options: CapabilityStoreOptions = {}): Promise<CapabilityStore> {
  const { database } = pickOptions('capability store options', options, [])
  return new CapabilityStore(await openStoreDatabase(CAPABILITY_SCHEMA, path, resolveDatabaseOptions(database)))
}

/** Issued capability tokens by id. */
export class CapabilityStore implements TrustCapabilityStore {
  readonly #db: SqliteDatabase
  constructor(db: SqliteDatabase) {
    this.#db = db
  }

  get path(): string {
    return this.#db.path
  }

  get isEphemeral(): boolean {
    return this.#db.isEphemeral
  }

  /** Records an issued token; resolves once committed. Re-recording the same id is refused. */
  async remember(token: CapabilityToken): Promise<void> {
    if (typeof token?.id !== 'string' || token.id === '') throw new StoreInputError('token.id', 'a non-empty string', token?.id)
    try {
      await this.#db.run('INSERT INTO capabilities (capability_id, subject, issuer, issued_at, expires_at, token_json) VALUES (?, ?, ?, ?, ?, ?)', [
        token.id,
        token.subject,
        token.issuer,
        token.issued_at,
        token.expires_at,
        JSON.stringify(token),
      ])
    } catch (err) {
      throw new StoreFailedError('capabilities', this.path, `cannot record capability ${token.id} (${errorText(err)})`, err)
    }
  }

  /** The issued token with this id, if any. */
  async get(capabilityId: string): Promise<CapabilityToken | undefined> {
    const row = await this.#db.get<{ token_json: string }>('SELECT token_json FROM capabilities WHERE capability_id = ?', [capabilityId])
    return row === undefined ? undefined : (JSON.parse(row.token_json) as CapabilityToken)
  }

  /** Subject keys of the given capability ids (the capability-lineage join of spec 03). */
  async subjectsOf(capabilityIds: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (let i = 0; i < capabilityIds.length; i += 500) {
      const chunk = capabilityIds.slice(i, i + 500)
      const rows = await this.#db.all<{ capability_id: string; subject: string }>(
        `SELECT capability_id, subject FROM capabilities WHERE capability_id IN (${chunk.map(() => '?').join(',')})`,
        chunk,
      )
      for (const r of rows) out.set(r.capability_id, r.subject)
    }
    return out
  }

  /** Ids of the capabilities issued to `subject`. */
  async idsForSubject(subject: string): Promise<string[]> {
    const rows = await this.#db.all<{ capability_id: string }>('SELECT capability_id FROM capabilities WHERE subject = ?', [subject])
    return rows.map(r => r.capability_id)
  }

  close(): Promise<void> {
    return this.#db.close()
  }
}
