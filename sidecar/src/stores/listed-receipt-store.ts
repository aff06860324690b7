// Tool and child receipts (spec 03 ReceiptListResponse routes), appended through trust-control and kept
// in the receipt store's file beside the HTTP receipts, in a table of their own: each is stored and
// served as the bytes it arrived with; an id already stored answers idempotently.
import { chainMemberText, isChainMember, listedReceiptValues, type ListedReceiptFilter, type ListedReceiptInput, type ListedReceiptKind, type ListedReceiptRow, type ListedReceiptStorePort } from '@gate/trust'
import { DuplicateRecordError, StoreInputError } from '../errors.js'
import type { SqliteDatabase, SqlValue } from './sqlite-driver.js'


/** Tool and child receipts appended through trust-control, beside the HTTP receipts (same file). */
const LISTED_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS listed_receipts (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    receipt_id TEXT NOT NULL,
    timestamp INTEGER,
    tenant TEXT,
    capability_id TEXT,
    tool_server TEXT,
    tool_name TEXT,
    session_id TEXT,
    parent_request_id TEXT,
    request_id TEXT,
    json TEXT NOT NULL
  )`,
  'CREATE UNIQUE INDEX IF NOT EXISTS listed_receipts_by_id ON listed_receipts (kind, receipt_id)',
]

/** The `listed_receipts` table of a receipt store's file. */
export class ListedReceiptStore implements ListedReceiptStorePort {
  readonly #writer: SqliteDatabase
  readonly #reader: SqliteDatabase
  #ready: Promise<void> | undefined

  constructor(writer: SqliteDatabase, reader: SqliteDatabase) {
    this.#writer = writer
    this.#reader = reader
  }

  /** Creates the table of appended tool and child receipts (idempotent; not part of revision 3's required schema). */
  ensureTable(): Promise<void> {
    this.#ready ??= (async () => {
      for (const sql of LISTED_SCHEMA) await this.#writer.exec(sql)
    })()
    return this.#ready
  }

  /**
   * Appends a tool or child receipt; resolves with its seq once committed. An id already stored with the
   * same bytes answers its seq with `stored: false`; with other bytes it is refused (gate_conflict).
   */
  async append(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }> {
    await this.ensureTable()
    const values = listedReceiptValues(input)
    return this.#writer.transaction(async tx => {
      const existing = await tx.get<{ seq: number; json: string }>('SELECT seq, json FROM listed_receipts WHERE kind = ? AND receipt_id = ?', [
        input.kind,
        input.receiptId,
      ])
      if (existing !== undefined) {
        if (existing.json !== input.json) throw new DuplicateRecordError(`${input.kind} receipts`, input.receiptId)
        return { seq: existing.seq, stored: false }
      }
      const { lastInsertRowid } = await tx.run(
        `INSERT INTO listed_receipts (kind, receipt_id, timestamp, tenant, capability_id, tool_server, tool_name, session_id, parent_request_id, request_id, json)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        values,
      )
      return { seq: lastInsertRowid, stored: true }
    })
  }

  /** The newest `limit` tool or child receipts matching `filter`, in ascending seq order. */
  async list(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]> {
    await this.ensureTable()
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    const terms = ['kind = ?']
    const params: SqlValue[] = [kind]
    const exact: [keyof ListedReceiptFilter, string][] = [
      ['receiptId', 'receipt_id'],
      ['tenant', 'tenant'],
      ['capabilityId', 'capability_id'],
      ['toolServer', 'tool_server'],
      ['toolName', 'tool_name'],
      ['sessionId', 'session_id'],
      ['parentRequestId', 'parent_request_id'],
      ['requestId', 'request_id'],
    ]
    for (const [key, column] of exact) {
      const value = filter[key]
      if (value !== undefined) {
        terms.push(`${column} = ?`)
        params.push(value)
      }
    }
    if (filter.chainId !== undefined) {
      terms.push('instr(json, ?) > 0')
      params.push(chainMemberText(filter.chainId))
    }
    if (filter.since !== undefined) {
      terms.push('timestamp >= ?')
      params.push(filter.since)
    }
    if (filter.until !== undefined) {
      terms.push('timestamp <= ?')
      params.push(filter.until)
    }
    const rows = await this.#reader.all<ListedReceiptRow>(
      `SELECT seq, receipt_id AS receiptId, json FROM listed_receipts WHERE ${terms.join(' AND ')} ORDER BY seq DESC LIMIT ?`,
      [...params, limit],
    )
    // the substring can sit inside a member other than the top-level chainId: each hit is checked
    return (filter.chainId === undefined ? rows : rows.filter(r => isChainMember(r.json, filter.chainId!))).reverse()
  }
}
