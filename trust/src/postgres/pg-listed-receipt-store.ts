// Tool and child receipts (spec 03 ReceiptListResponse routes) on PostgreSQL: stored and served as the
// bytes they arrived with; the same id again with the same bytes is idempotent, with other bytes 409.
import type { ListedReceiptFilter, ListedReceiptInput, ListedReceiptKind, ListedReceiptRow } from '../ports.js'
import { DuplicateRecordError, StoreInputError } from '../errors.js'
import type { ListedReceiptStorePort } from '../store-ports.js'
import { listedReceiptValues } from '../stores/store-input.js'
import { chainMemberText, isChainMember } from '../stores/chain-members.js'
import type { PgDatabase } from './pg-database.js'
import { SqlWhere } from './pg-receipt-query.js'

const EXACT: readonly [keyof ListedReceiptFilter, string][] = [
  ['receiptId', 'receipt_id'],
  ['tenant', 'tenant'],
  ['capabilityId', 'capability_id'],
  ['toolServer', 'tool_server'],
  ['toolName', 'tool_name'],
  ['sessionId', 'session_id'],
  ['parentRequestId', 'parent_request_id'],
  ['requestId', 'request_id'],
]

/** The `listed_receipts` table. */
export class PgListedReceiptStore implements ListedReceiptStorePort {
  readonly #db: PgDatabase

  constructor(db: PgDatabase) {
    this.#db = db
  }

  async append(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }> {
    const values = listedReceiptValues(input)
    // one statement: insert, or (on the unique (kind, receipt_id)) read what is stored
    const row = await this.#db.get<{ seq: number; json: string; stored: boolean }>(
      `WITH inserted AS (
         INSERT INTO listed_receipts (kind, receipt_id, timestamp, tenant, capability_id, tool_server, tool_name, session_id, parent_request_id, request_id, json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (kind, receipt_id) DO NOTHING RETURNING seq, json)
       SELECT seq, json, true AS stored FROM inserted
       UNION ALL SELECT seq, json, false AS stored FROM listed_receipts WHERE kind = $1 AND receipt_id = $2 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      values,
    )
    if (row === undefined) throw new DuplicateRecordError(`${input.kind} receipts`, input.receiptId)
    if (!row.stored && row.json !== input.json) throw new DuplicateRecordError(`${input.kind} receipts`, input.receiptId)
    return { seq: row.seq, stored: row.stored }
  }

  /** The newest `limit` matching receipts, in ascending seq order. */
  async list(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    const w = new SqlWhere()
    w.add(`kind = ${w.param(kind)}`)
    for (const [key, column] of EXACT) {
      const value = filter[key]
      if (value !== undefined) w.add(`${column} = ${w.param(value as string)}`)
    }
    if (filter.chainId !== undefined) w.add(`strpos(json, ${w.param(chainMemberText(filter.chainId))}) > 0`)
    if (filter.since !== undefined) w.add(`timestamp >= ${w.param(filter.since)}`)
    if (filter.until !== undefined) w.add(`timestamp <= ${w.param(filter.until)}`)
    const rows = await this.#db.all<ListedReceiptRow>(`SELECT seq, receipt_id AS "receiptId", json FROM listed_receipts ${w.sql} ORDER BY seq DESC LIMIT ${w.param(limit)}`, w.params)
    // the substring can sit inside a member other than the top-level chainId: each hit is checked
    return (filter.chainId === undefined ? rows : rows.filter(r => isChainMember(r.json, filter.chainId!))).reverse()
  }
}
