// Issued capability tokens on PostgreSQL (the lineage the agent filter joins on), stored as serialized.
import type { CapabilityToken } from '@gate/sdk'
import { StoreInputError } from '../errors.js'
import type { TrustCapabilityStore } from '../store-ports.js'
import type { PgDatabase } from './pg-database.js'

export class PgCapabilityStore implements TrustCapabilityStore {
  readonly #db: PgDatabase

  constructor(db: PgDatabase) {
    this.#db = db
  }

  get isEphemeral(): boolean {
    return false
  }

  async remember(token: CapabilityToken): Promise<void> {
    if (typeof token?.id !== 'string' || token.id === '') throw new StoreInputError('token.id', 'a non-empty string', token?.id)
    await this.#db.run('INSERT INTO capabilities (capability_id, subject, issuer, issued_at, expires_at, token_json) VALUES ($1, $2, $3, $4, $5, $6)', [
      token.id,
      token.subject,
      token.issuer,
      token.issued_at,
      token.expires_at,
      JSON.stringify(token),
    ])
  }

  async get(capabilityId: string): Promise<CapabilityToken | undefined> {
    const row = await this.#db.get<{ token_json: string }>('SELECT token_json FROM capabilities WHERE capability_id = $1', [capabilityId])
    return row === undefined ? undefined : (JSON.parse(row.token_json) as CapabilityToken)
  }

  async subjectsOf(capabilityIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.#db.all<{ capability_id: string; subject: string }>('SELECT capability_id, subject FROM capabilities WHERE capability_id = ANY($1::text[])', [capabilityIds])
    return new Map(rows.map(r => [r.capability_id, r.subject]))
  }

  async idsForSubject(subject: string): Promise<string[]> {
    return (await this.#db.all<{ capability_id: string }>('SELECT capability_id FROM capabilities WHERE subject = $1', [subject])).map(r => r.capability_id)
  }
}
