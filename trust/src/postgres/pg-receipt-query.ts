// Reads of the receipts table on PostgreSQL: point loads, cursor pages and trust-control's corpus queries
// (spec 03 receipt query, analytics, operator report). The SQLite reader names its access paths because
// SQLite without statistics guesses poorly; PostgreSQL's planner has statistics and the plain indexes of
// migration 1, so each query is the filter as written. Every value is a numbered parameter.
import type { CorpusAggregateRow, CorpusFilter, CorpusGrouping, CorpusRow } from '../ports.js'
import { StoreInputError } from '../errors.js'
import type { StoredReceipt } from '../stores/receipt-row.js'
import { chainMemberText, isChainMember } from '../stores/chain-members.js'
import type { CorePendingRow, TrustReceiptReader } from '../store-ports.js'
import type { PgDatabase, PgValue } from './pg-database.js'

const RECEIPT_HEX = /^[0-9a-f]{64}$/

const PAGE_COLUMNS = `seq, receipt_id AS "receiptId", timestamp, tenant, outcome, capability_id AS "capabilityId", subject_key AS "subjectKey",
  tool_server AS "toolServer", tool_name AS "toolName", cost_units AS "costUnits", cost_currency AS "costCurrency",
  attempted_cost_units AS "attemptedCostUnits", http_json AS "httpJson", core_json AS "coreJson"`

const SELECT_COLUMNS = `seq, receipt_id AS "receiptId", timestamp, request_id AS "requestId", method, route_pattern AS "routePattern",
  tool_server AS "toolServer", tool_name AS "toolName", outcome, capability_id AS "capabilityId", tenant, subject_key AS "subjectKey",
  cost_units AS "costUnits", cost_currency AS "costCurrency", attempted_cost_units AS "attemptedCostUnits", kind,
  decision_receipt_id AS "decisionReceiptId", http_json AS "httpJson", core_json AS "coreJson"`

const METRICS = `count(*) AS total, count(*) FILTER (WHERE outcome = 'allow') AS allow, count(*) FILTER (WHERE outcome = 'deny') AS deny,
  count(*) FILTER (WHERE outcome = 'cancelled') AS cancelled, count(*) FILTER (WHERE outcome = 'incomplete') AS incomplete,
  coalesce(sum(cost_units), 0) AS charged, coalesce(sum(attempted_cost_units), 0) AS attempted`

/** A WHERE clause and its parameters; `param` numbers further values after the filter's. */
export class SqlWhere {
  readonly terms: string[] = []
  readonly params: PgValue[] = []

  /** The placeholder of a new parameter holding `value`. */
  param(value: PgValue): string {
    this.params.push(value)
    return `$${this.params.length}`
  }

  add(term: string): void {
    this.terms.push(term)
  }

  get sql(): string {
    return this.terms.length === 0 ? '' : `WHERE ${this.terms.join(' AND ')}`
  }
}

/** The WHERE clause of a corpus filter (spec 03 semantics: AND, inclusive bounds). */
export function corpusWhere(f: CorpusFilter): SqlWhere {
  const w = new SqlWhere()
  if (f.capabilityId !== undefined) w.add(`capability_id = ${w.param(f.capabilityId)}`)
  if (f.toolServer !== undefined) w.add(`tool_server = ${w.param(f.toolServer)}`)
  if (f.toolName !== undefined) w.add(`tool_name = ${w.param(f.toolName)}`)
  if (f.outcome !== undefined) w.add(`outcome = ${w.param(f.outcome)}`)
  if (f.tenant !== undefined) w.add(`tenant = ${w.param(f.tenant)}`)
  if (f.since !== undefined) w.add(`timestamp >= ${w.param(f.since)}`)
  if (f.until !== undefined) w.add(`timestamp <= ${w.param(f.until)}`)
  if (f.costCurrency !== undefined) w.add(`cost_currency = ${w.param(f.costCurrency)} AND cost_units IS NOT NULL`)
  if (f.minCost !== undefined) w.add(`cost_units >= ${w.param(f.minCost)}`)
  if (f.maxCost !== undefined) w.add(`cost_units <= ${w.param(f.maxCost)}`)
  if (f.withCost === true) w.add('cost_units IS NOT NULL')
  if (f.withCapability === true) w.add('capability_id IS NOT NULL')
  if (f.subject !== undefined) {
    const key = w.param(f.subject.subjectKey)
    const ids = f.subject.capabilityIds
    w.add(ids.length === 0 ? `subject_key = ${key}` : `(subject_key = ${key} OR (subject_key IS NULL AND capability_id = ANY(${w.param(ids)}::text[])))`)
  }
  if (f.afterSeq !== undefined) w.add(`seq > ${w.param(f.afterSeq)}`)
  if (f.throughSeq !== undefined) w.add(`seq <= ${w.param(f.throughSeq)}`)
  return w
}

/** Committed receipts, read (any node's). */
export class PgReceiptQuery implements TrustReceiptReader {
  readonly #db: PgDatabase

  constructor(db: PgDatabase) {
    this.#db = db
  }

  async getById(receiptId: string): Promise<StoredReceipt | undefined> {
    if (typeof receiptId !== 'string' || !RECEIPT_HEX.test(receiptId)) return undefined
    return this.#db.get<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE receipt_id = $1`, [receiptId])
  }

  async getBySeq(seq: number): Promise<StoredReceipt | undefined> {
    return this.#db.get<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq = $1`, [seq])
  }

  /** Of `receiptIds`, those stored, with their seq (receipt ids are unique here). */
  async findStored(receiptIds: readonly string[]): Promise<Map<string, number>> {
    const ids = [...new Set(receiptIds)].filter(id => RECEIPT_HEX.test(id))
    if (ids.length === 0) return new Map()
    const rows = await this.#db.all<{ receiptId: string; seq: number }>('SELECT receipt_id AS "receiptId", seq FROM receipts WHERE receipt_id = ANY($1::text[])', [ids])
    return new Map(rows.map(r => [r.receiptId, Number(r.seq)]))
  }

  async count(): Promise<number> {
    return (await this.#db.get<{ n: number }>('SELECT count(*) AS n FROM receipts'))?.n ?? 0
  }

  async latestSeq(): Promise<number> {
    return (await this.#db.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipts'))?.seq ?? 0
  }

  async listAfter(cursorSeq: number, limit: number): Promise<StoredReceipt[]> {
    if (!Number.isSafeInteger(cursorSeq) || cursorSeq < 0) throw new StoreInputError('cursor', 'a non-negative integer', cursorSeq)
    checkLimit(limit)
    return this.#db.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq > $1 ORDER BY seq LIMIT $2`, [cursorSeq, limit])
  }

  async *iterate(cursorSeq = 0, pageSize = 500): AsyncGenerator<StoredReceipt> {
    let cursor = cursorSeq
    for (;;) {
      const page = await this.listAfter(cursor, pageSize)
      yield* page
      if (page.length < pageSize) return
      cursor = page[page.length - 1]!.seq
    }
  }

  async queryPage(filter: CorpusFilter, limit: number, order: 'asc' | 'desc' = 'asc'): Promise<CorpusRow[]> {
    checkLimit(limit)
    if (order !== 'asc' && order !== 'desc') throw new StoreInputError('order', 'asc or desc', order)
    if (isEmptyWindow(filter)) return []
    const w = corpusWhere(filter)
    return this.#db.all<CorpusRow>(`SELECT ${PAGE_COLUMNS} FROM receipts ${w.sql} ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ${w.param(limit)}`, w.params)
  }

  async countMatching(filter: CorpusFilter): Promise<number> {
    if (isEmptyWindow(filter)) return 0
    const w = corpusWhere(filter)
    return (await this.#db.get<{ n: number }>(`SELECT count(*) AS n FROM receipts ${w.sql}`, w.params))?.n ?? 0
  }

  /** Counts and cost sums of the receipts matching `filter`, grouped as the SQLite reader groups them. */
  async aggregate(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds = 86400, perBucket = false): Promise<CorpusAggregateRow[]> {
    if (!Number.isSafeInteger(bucketSeconds) || bucketSeconds < 1) throw new StoreInputError('bucketSeconds', 'a positive integer', bucketSeconds)
    if (isEmptyWindow(filter)) return []
    const w = corpusWhere(filter)
    const split = perBucket && grouping !== 'none' && grouping !== 'time'
    const bucketExpr = () => `timestamp - timestamp % ${w.param(bucketSeconds)}`
    const bucket = split ? `${bucketExpr()} AS "bucketStart", ` : ''
    const keys = (n: number) => Array.from({ length: n + (split ? 1 : 0) }, (_, i) => i + 1).join(', ')
    let sql: string
    switch (grouping) {
      case 'none':
        sql = `SELECT ${METRICS} FROM receipts ${w.sql}`
        break
      case 'time':
        sql = `SELECT ${bucketExpr()} AS "bucketStart", ${METRICS} FROM receipts ${w.sql} GROUP BY 1`
        break
      case 'tool':
        sql = `SELECT ${bucket}tool_server AS "toolServer", tool_name AS "toolName", ${METRICS} FROM receipts ${w.sql} GROUP BY ${keys(2)}`
        break
      case 'subject':
        sql = `SELECT ${bucket}subject_key AS "subjectKey", CASE WHEN subject_key IS NULL THEN capability_id END AS "capabilityId", ${METRICS}
          FROM receipts ${w.sql} GROUP BY ${keys(2)}`
        break
      case 'cost':
        w.add('(cost_units IS NOT NULL OR attempted_cost_units IS NOT NULL)')
        sql = `SELECT ${bucket}capability_id AS "capabilityId", subject_key AS "subjectKey", cost_currency AS "costCurrency", ${METRICS}
          FROM receipts ${w.sql} GROUP BY ${keys(3)}`
        break
      default:
        throw new StoreInputError('grouping', 'none, time, tool, subject or cost', grouping)
    }
    const rows = await this.#db.all<CorpusAggregateRow>(sql, w.params)
    return rows.filter(r => r.total > 0)
  }

  /** Rows after `afterSeq` without a stored core form, ascending; with `kernelKey`, only rows naming that signer. */
  async listCorePending(afterSeq: number, limit: number, kernelKey?: string): Promise<CorePendingRow[]> {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new StoreInputError('afterSeq', 'a non-negative integer', afterSeq)
    checkLimit(limit)
    const params: PgValue[] = [afterSeq, limit]
    // the conversion checks the key itself; this only spares reading rows another key signed
    const signer = kernelKey === undefined ? '' : `AND strpos(http_json, $3) > 0`
    if (kernelKey !== undefined) params.push(`"kernel_key":${JSON.stringify(kernelKey)}`)
    return this.#db.all<CorePendingRow>(
      `SELECT seq, receipt_id AS "receiptId", http_json AS "httpJson" FROM receipts WHERE core_json IS NULL AND http_json IS NOT NULL AND seq > $1 ${signer} ORDER BY seq LIMIT $2`,
      params,
    )
  }

  /** Final receipts that name `decisionReceiptId`, after the decision's seq. */
  async findFinals(decisionSeq: number, decisionReceiptId: string): Promise<StoredReceipt[]> {
    return this.#db.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE decision_receipt_id = $1 AND seq > $2 ORDER BY seq`, [decisionReceiptId, decisionSeq])
  }

  /** Core-only receipts of chain `chainId`, in seq order: a substring search, each hit checked (chain-members.ts). */
  async listChain(chainId: string, limit: number): Promise<StoredReceipt[]> {
    checkLimit(limit)
    const rows = await this.#db.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE http_json IS NULL AND strpos(core_json, $1) > 0 ORDER BY seq LIMIT $2`, [chainMemberText(chainId), limit])
    return rows.filter(row => isChainMember(row.coreJson, chainId))
  }

  /** Nothing of its own to close: the pool belongs to the stores. */
  async close(): Promise<void> {}
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
}

function isEmptyWindow(f: CorpusFilter): boolean {
  return f.since !== undefined && f.until !== undefined && f.since > f.until
}
