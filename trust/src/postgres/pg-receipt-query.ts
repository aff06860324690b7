// Reads of the receipts table on PostgreSQL: point loads, cursor pages and trust-control's corpus queries
// (spec 03 receipt query, analytics, operator report). The SQLite reader names its access paths because
// SQLite without statistics guesses poorly; PostgreSQL's planner has statistics and an index per filter
// ending in seq (migration 4), so a page is the filter as written plus a keyset bound (`seq > cursor`,
// never OFFSET). Windows and whole-corpus counts come from the per-hour rollups (pg-receipt-rollup.ts).
import type { CorpusAggregateRow, CorpusFilter, CorpusGrouping, CorpusRow } from '../ports.js'
import { StoreInputError } from '../errors.js'
import type { StoredReceipt } from '../stores/receipt-row.js'
import { chainMemberText, isChainMember } from '../stores/chain-members.js'
import type { CorePendingRow, TrustReceiptReader } from '../store-ports.js'
import type { PgDatabase, PgValue } from './pg-database.js'
import { corpusWhere, isEmptyWindow, scanAggregate, scanCount, type PgCorpusFilter } from './pg-corpus-sql.js'
import { rollupAggregate, rollupCount, rollupCountPlan, rollupCovers, seqBounds } from './pg-receipt-rollup.js'

export { corpusWhere, SqlWhere } from './pg-corpus-sql.js'

const RECEIPT_HEX = /^[0-9a-f]{64}$/

const PAGE_COLUMNS = `seq, receipt_id AS "receiptId", timestamp, tenant, outcome, capability_id AS "capabilityId", subject_key AS "subjectKey",
  tool_server AS "toolServer", tool_name AS "toolName", cost_units AS "costUnits", cost_currency AS "costCurrency",
  attempted_cost_units AS "attemptedCostUnits", http_json AS "httpJson", core_json AS "coreJson"`

const SELECT_COLUMNS = `seq, receipt_id AS "receiptId", timestamp, request_id AS "requestId", method, route_pattern AS "routePattern",
  tool_server AS "toolServer", tool_name AS "toolName", outcome, capability_id AS "capabilityId", tenant, subject_key AS "subjectKey",
  cost_units AS "costUnits", cost_currency AS "costCurrency", attempted_cost_units AS "attemptedCostUnits", kind,
  decision_receipt_id AS "decisionReceiptId", http_json AS "httpJson", core_json AS "coreJson"`

/** Committed receipts, read (any node's). */
export class PgReceiptQuery implements TrustReceiptReader {
  readonly #db: PgDatabase
  readonly keepsRollups = true

  constructor(db: PgDatabase) {
    this.#db = db
  }

  async getById(receiptId: string): Promise<StoredReceipt | undefined> {
    if (typeof receiptId !== 'string' || !RECEIPT_HEX.test(receiptId)) return undefined
    // the id table names the row's seq and timestamp: the timestamp prunes to its partition
    return this.#db.get<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE (seq, timestamp) = (SELECT seq, timestamp FROM receipt_ids WHERE receipt_id = $1)`, [receiptId])
  }

  async getBySeq(seq: number): Promise<StoredReceipt | undefined> {
    return this.#db.get<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE (seq, timestamp) = (SELECT seq, timestamp FROM receipt_ids WHERE seq = $1)`, [seq])
  }

  /** Of `receiptIds`, those stored, with their seq (receipt ids are unique here). */
  async findStored(receiptIds: readonly string[]): Promise<Map<string, number>> {
    const ids = [...new Set(receiptIds)].filter(id => RECEIPT_HEX.test(id))
    if (ids.length === 0) return new Map()
    const rows = await this.#db.all<{ receiptId: string; seq: number }>('SELECT receipt_id AS "receiptId", seq FROM receipt_ids WHERE receipt_id = ANY($1::text[])', [ids])
    return new Map(rows.map(r => [r.receiptId, Number(r.seq)]))
  }

  async count(): Promise<number> {
    return (await this.#db.get<{ n: number }>('SELECT count(*) AS n FROM receipt_ids'))?.n ?? 0
  }

  async latestSeq(): Promise<number> {
    return (await this.#db.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipt_ids'))?.seq ?? 0
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
    const bounded = await this.#boundBySeq(filter)
    if (bounded === undefined) return []
    // the agent: its rows with the subject key, and those without one found by its capabilities, are
    // two keyset scans (each on its own index, in seq order) merged here, never one scan sorted
    const parts = splitSubject(bounded)
    const pages = await Promise.all(
      parts.map(f => {
        const w = corpusWhere(f)
        return this.#db.all<CorpusRow>(`SELECT ${PAGE_COLUMNS} FROM receipts ${w.sql} ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ${w.param(limit)}`, w.params)
      }),
    )
    if (pages.length === 1) return pages[0]!
    const merged = pages.flat().sort((a, b) => (order === 'asc' ? a.seq - b.seq : b.seq - a.seq))
    return merged.slice(0, limit)
  }

  async countMatching(filter: CorpusFilter): Promise<number> {
    if (isEmptyWindow(filter)) return 0
    const plan = rollupCountPlan(filter)
    // with neither a window, a snapshot nor a flag it is a plain count of one index
    if (plan !== undefined && (filter.since !== undefined || filter.until !== undefined || plan.column !== 'total' || filter.throughSeq !== undefined)) return rollupCount(this.#db, filter, plan)
    const counts = await Promise.all(splitSubject(filter).map(f => scanCount(this.#db, f)))
    return counts.reduce((a, b) => a + b, 0)
  }

  // A time window narrowed to the seqs its hours hold (the time rollup's bounds), so a page by seq reads
  // only that range; undefined when no receipt lies in the window.
  async #boundBySeq(filter: CorpusFilter): Promise<CorpusFilter | undefined> {
    if (filter.since === undefined && filter.until === undefined) return filter
    const bounds = await seqBounds(this.#db, filter.since, filter.until)
    if (bounds === null) return undefined
    return {
      ...filter,
      afterSeq: Math.max(filter.afterSeq ?? 0, bounds.min - 1),
      throughSeq: Math.min(filter.throughSeq ?? Number.MAX_SAFE_INTEGER, bounds.max),
    }
  }

  /** Counts and cost sums of the receipts matching `filter`, grouped as the SQLite reader groups them (from the rollups when they cover the filter). */
  async aggregate(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds = 86400, perBucket = false): Promise<CorpusAggregateRow[]> {
    if (rollupCovers(filter, grouping, bucketSeconds, perBucket)) return rollupAggregate(this.#db, filter, grouping, bucketSeconds)
    return scanAggregate(this.#db, filter, grouping, bucketSeconds, perBucket)
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

// The agent filter as two disjoint filters (rows with the subject key; rows without one, by capability).
function splitSubject(filter: CorpusFilter): PgCorpusFilter[] {
  const subject = filter.subject
  if (subject === undefined || subject.capabilityIds.length === 0) return [filter]
  return [
    { ...filter, subject: { subjectKey: subject.subjectKey, capabilityIds: [] } },
    { ...filter, subject: undefined, lineageOf: subject.capabilityIds },
  ]
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
}

