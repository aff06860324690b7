// Reads of the receipts table: point loads by id and seq, cursor pages, and trust-control's queries
// (spec 03 receipt query, analytics, operator report) with the plans of receipt-query-plan.ts. Reads use
// connections of their own: under WAL they see only committed rows and never wait for the writer.
import { chainMemberText, idPrefix, isChainMember, type CorePendingRow, type CorpusAggregateRow, type CorpusFilter, type CorpusGrouping, type CorpusRow, type StoredReceipt, type TrustReceiptReader } from '@gate/trust'
import { StoreInputError } from '../errors.js'
import { COVERING, emptyWindow, isBucketOrdered, planQuery, subjectBranches } from './receipt-query-plan.js'
import { ReceiptIdFilter } from './receipt-id-filter.js'
import { ID_BUCKET_ROWS } from './receipt-log.js'
import type { SqliteDatabase, SqlValue } from './sqlite-driver.js'

/** Receipts after a cursor as one `POST /v1/receipts/ingest` body (ReceiptQuery.ingestBatchAfter). */
export interface IngestBatch {
  /** The body's UTF-8 bytes. */
  body: Buffer
  /** How many receipts it holds, and the seq of the last. */
  count: number
  lastSeq: number
}

// The row columns an ingest item carries beside its receipt, as a JSON object's members (docs/postgres.md).
const INGEST_COLUMNS = `'tenant', tenant, 'subjectKey', subject_key, 'costUnits', cost_units, 'costCurrency', cost_currency,
  'attemptedCostUnits', attempted_cost_units, 'kind', kind, 'decisionReceiptId', decision_receipt_id`
// Built by SQLite on the reader's own thread, as bytes (a BLOB): each stored receipt's signed bytes go out
// as they are, and no string is built, measured or encoded on the event loop. A tool call's receipt has
// only its core form, and names its request id beside it.
const INGEST_BATCH_SQL = `SELECT count(*) AS count, max(seq) AS lastSeq,
    CAST('{"receipts":[' || group_concat(item, ',' ORDER BY seq) || ']}' AS BLOB) AS body
  FROM (
    SELECT seq, CASE WHEN http_json IS NULL
        THEN '{"coreReceipt":' || core_json || ',' || substr(json_object('requestId', request_id, ${INGEST_COLUMNS}), 2)
        ELSE '{"receipt":' || http_json || ',' || substr(json_object(${INGEST_COLUMNS}), 2)
      END AS item
    FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?
  )`

const RECEIPT_HEX = /^[0-9a-f]{64}$/
const TIME_WINDOW_CACHE_SIZE = 256

const PAGE_COLUMNS = `seq, receipt_id AS receiptId, timestamp, tenant, outcome, capability_id AS capabilityId, subject_key AS subjectKey,
  tool_server AS toolServer, tool_name AS toolName, cost_units AS costUnits, cost_currency AS costCurrency,
  attempted_cost_units AS attemptedCostUnits, http_json AS httpJson, core_json AS coreJson`

const SELECT_COLUMNS = `seq, receipt_id AS receiptId, timestamp, request_id AS requestId, method, route_pattern AS routePattern,
  tool_server AS toolServer, tool_name AS toolName, outcome, capability_id AS capabilityId, tenant, subject_key AS subjectKey,
  cost_units AS costUnits, cost_currency AS costCurrency, attempted_cost_units AS attemptedCostUnits, kind,
  decision_receipt_id AS decisionReceiptId, http_json AS httpJson, core_json AS coreJson`

// Probe each bucket's (id_bucket, id_prefix) index entry, newest bucket first, in one statement, and
// stop at the first match (the recursive CTE is evaluated lazily): recent receipts are found after a
// few probes, an unknown id costs one probe per bucket. CROSS JOIN pins the join order so SQLite never
// scans the table instead. (`bucket` has only column `b`, so receipt columns need no qualifier.)
const byIdSql = (columns: string) => `WITH RECURSIVE bucket(b) AS (
    SELECT (SELECT max(id_bucket) FROM receipts)
    UNION ALL SELECT b - 1 FROM bucket WHERE b > 0
  )
  SELECT ${columns}
  FROM bucket CROSS JOIN receipts AS r ON r.id_bucket = bucket.b AND r.id_prefix = ?
  WHERE r.receipt_id = ? LIMIT 1`
const GET_BY_ID_SQL = byIdSql(SELECT_COLUMNS)
const SEQ_BY_ID_SQL = byIdSql('seq')

/** Committed receipts, read. */
export class ReceiptQuery implements TrustReceiptReader {
  readonly #reader: SqliteDatabase
  // Index names present in the file (query planning hints only name indexes that exist).
  #indexes = new Set<string>()
  // Seq window [lo, hi] of a time filter, see #timeWindow.
  readonly #timeWindows = new Map<string, { lo: number; hi: number; through: number }>()
  // Connections of their own for counts and for aggregates, opened on first use: a statement holds its
  // connection until done, so a count or an analytics scan of a million receipts (hundreds of ms) on
  // the page reader would stall every short page and point load queued behind it.
  readonly #openReader: (() => Promise<SqliteDatabase>) | undefined
  #countReader: Promise<SqliteDatabase> | undefined
  #aggregateReader: Promise<SqliteDatabase> | undefined
  // for findStored (trust-control's ingest), made on first use: 8 MiB
  #idFilter: ReceiptIdFilter | undefined

  /** `openReader` opens another reader of the same file (none for an in-memory store: everything reads `reader`). */
  constructor(reader: SqliteDatabase, openReader?: () => Promise<SqliteDatabase>) {
    this.#reader = reader
    this.#openReader = openReader
  }

  /** The committed receipt with this id (the newest copy, should the same receipt have been appended twice). */
  async getById(receiptId: string): Promise<StoredReceipt | undefined> {
    if (typeof receiptId !== 'string' || !RECEIPT_HEX.test(receiptId)) return undefined
    return this.#reader.get<StoredReceipt>(GET_BY_ID_SQL, [idPrefix(receiptId), receiptId])
  }

  /**
   * Of `receiptIds`, those stored, with their seq (the newest copy's). Only ids the filter of stored id
   * prefixes cannot rule out are looked up, so a batch of fresh ids costs no bucket probes.
   */
  async findStored(receiptIds: readonly string[]): Promise<Map<string, number>> {
    this.#idFilter ??= new ReceiptIdFilter(this.#reader)
    await this.#idFilter.sync()
    const found = new Map<string, number>()
    for (const id of new Set(receiptIds)) {
      if (!RECEIPT_HEX.test(id) || !this.#idFilter.mayContain(idPrefix(id))) continue
      const row = await this.#reader.get<{ seq: number }>(SEQ_BY_ID_SQL, [idPrefix(id), id])
      if (row !== undefined) found.set(id, row.seq)
    }
    return found
  }

  /** The committed receipt at `seq`. */
  async getBySeq(seq: number): Promise<StoredReceipt | undefined> {
    return this.#reader.get<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq = ?`, [seq])
  }

  /** Number of committed receipts (a full index scan: for reports, not the hot path). */
  async count(): Promise<number> {
    const row = await this.#reader.get<{ n: number }>('SELECT count(*) AS n FROM receipts')
    return row?.n ?? 0
  }

  /** The highest committed `seq`, 0 when empty. */
  async latestSeq(): Promise<number> {
    const row = await this.#reader.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipts')
    return row?.seq ?? 0
  }

  /** Up to `limit` receipts with `seq` greater than `cursorSeq`, ascending (the spec 03 cursor). */
  async listAfter(cursorSeq: number, limit: number): Promise<StoredReceipt[]> {
    checkCursorPage(cursorSeq, limit)
    return this.#reader.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?`, [cursorSeq, limit])
  }

  /** Up to `limit` receipts after `cursorSeq`, in `seq` order, as one ingest body; undefined when there are none. */
  async ingestBatchAfter(cursorSeq: number, limit: number): Promise<IngestBatch | undefined> {
    checkCursorPage(cursorSeq, limit)
    const row = await this.#reader.get<{ count: number; lastSeq: number | null; body: Uint8Array | null }>(INGEST_BATCH_SQL, [cursorSeq, limit])
    if (row === undefined || row.count === 0 || row.lastSeq === null || row.body === null) return undefined
    // sqlite3 answers a Buffer, node:sqlite a Uint8Array: the same bytes either way
    const body = Buffer.isBuffer(row.body) ? row.body : Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength)
    return { body, count: row.count, lastSeq: row.lastSeq }
  }

  /** Every receipt after `cursorSeq` in `seq` order, read page by page. */
  async *iterate(cursorSeq = 0, pageSize = 500): AsyncGenerator<StoredReceipt> {
    let cursor = cursorSeq
    for (;;) {
      const page = await this.listAfter(cursor, pageSize)
      yield* page
      if (page.length < pageSize) return
      cursor = page[page.length - 1]!.seq
    }
  }

  /** Names of the indexes on the receipts table (read again from the file). */
  async indexNames(): Promise<string[]> {
    const rows = await this.#reader.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'receipts'")
    this.#indexes = new Set(rows.map(r => r.name))
    return [...this.#indexes].sort()
  }

  /** Up to `limit` receipts matching `filter` by seq: the oldest first (`asc`, default) or the newest first. */
  async queryPage(filter: CorpusFilter, limit: number, order: 'asc' | 'desc' = 'asc'): Promise<CorpusRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    if (order !== 'asc' && order !== 'desc') throw new StoreInputError('order', 'asc or desc', order)
    const narrowed = await this.#narrow(filter)
    if (narrowed === undefined) return []
    const maxBucket = await this.#maxBucket(narrowed)
    const pages: CorpusRow[][] = []
    for (const branch of subjectBranches(narrowed)) {
      const plan = planQuery(branch, order === 'asc' ? 'page' : 'page-desc', this.#indexes, maxBucket)
      // Bucket plans yield rows bucket by bucket, each bucket in seq order, so no sort is needed; buckets
      // are exact (floor(seq / ID_BUCKET_ROWS)) and the order is checked anyway, falling back to a sort.
      const orderBy = plan.bucketed && order === 'asc' ? '' : `ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'}`
      let page = await this.#reader.all<CorpusRow & { idBucket?: number }>(
        `${plan.with}SELECT ${PAGE_COLUMNS}${orderBy === '' ? ', id_bucket AS idBucket' : ''} ${plan.from} ${plan.where} ${orderBy} LIMIT ?`,
        [...plan.params, limit],
      )
      if (orderBy === '' && !isBucketOrdered(page)) {
        const fallback = planQuery(branch, 'page', new Set(), maxBucket)
        page = await this.#reader.all<CorpusRow>(`SELECT ${PAGE_COLUMNS} ${fallback.from} ${fallback.where} ORDER BY seq LIMIT ?`, [...fallback.params, limit])
      }
      pages.push(page)
    }
    if (pages.length === 1) return pages[0]!
    return pages.flat().sort((a, b) => (order === 'asc' ? a.seq - b.seq : b.seq - a.seq)).slice(0, limit)
  }

  /** Number of receipts matching `filter`. */
  async countMatching(filter: CorpusFilter): Promise<number> {
    const narrowed = emptyWindow(filter) ? undefined : filter
    if (narrowed === undefined) return 0
    const maxBucket = await this.#maxBucket(narrowed)
    let total = 0
    for (const branch of subjectBranches(narrowed)) {
      const plan = planQuery(branch, 'count', this.#indexes, maxBucket)
      const row = await (await this.#counts()).get<{ n: number }>(`${plan.with}SELECT count(*) AS n ${plan.from} ${plan.where}`, plan.params)
      total += row?.n ?? 0
    }
    return total
  }

  /**
   * Counts and cost sums of the receipts matching `filter`, grouped as asked: `time` by buckets of
   * `bucketSeconds`; with `perBucket`, the `tool`, `subject` and `cost` groups are also split by bucket.
   */
  async aggregate(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds = 86400, perBucket = false): Promise<CorpusAggregateRow[]> {
    if (!Number.isSafeInteger(bucketSeconds) || bucketSeconds < 1) throw new StoreInputError('bucketSeconds', 'a positive integer', bucketSeconds)
    const narrowed = emptyWindow(filter) ? undefined : filter
    if (narrowed === undefined) return []
    const plan = planQuery(narrowed, 'aggregate', this.#indexes, await this.#maxBucket(narrowed))
    const metrics = `count(*) AS total, sum(outcome = 'allow') AS allow, sum(outcome = 'deny') AS deny,
      sum(outcome = 'cancelled') AS cancelled, sum(outcome = 'incomplete') AS incomplete,
      coalesce(sum(cost_units), 0) AS charged, coalesce(sum(attempted_cost_units), 0) AS attempted`
    const body = `${plan.from} ${plan.where}`
    const split = perBucket && grouping !== 'none' && grouping !== 'time'
    const bucket = split ? 'timestamp - timestamp % ? AS bucketStart, ' : ''
    const keys = (n: number) => Array.from({ length: n + (split ? 1 : 0) }, (_, i) => i + 1).join(', ')
    let sql: string
    const params: SqlValue[] = split ? [bucketSeconds] : []
    switch (grouping) {
      case 'none':
        sql = `SELECT ${metrics} ${body}`
        break
      case 'time':
        sql = `SELECT timestamp - timestamp % ? AS bucketStart, ${metrics} ${body} GROUP BY 1`
        params.push(bucketSeconds)
        break
      case 'tool':
        sql = `SELECT ${bucket}tool_server AS toolServer, tool_name AS toolName, ${metrics} ${body} GROUP BY ${keys(2)}`
        break
      case 'subject':
        sql = `SELECT ${bucket}subject_key AS subjectKey, CASE WHEN subject_key IS NULL THEN capability_id END AS capabilityId, ${metrics} ${body} GROUP BY ${keys(2)}`
        break
      case 'cost':
        sql = `SELECT ${bucket}capability_id AS capabilityId, subject_key AS subjectKey, cost_currency AS costCurrency, ${metrics}
          ${body} ${plan.where === '' ? 'WHERE' : 'AND'} (cost_units IS NOT NULL OR attempted_cost_units IS NOT NULL) GROUP BY ${keys(3)}`
        break
      default:
        throw new StoreInputError('grouping', 'none, time, tool, subject or cost', grouping)
    }
    // `bucketSeconds` is the first placeholder of the select list, before the plan's own
    const all = plan.with === '' ? [...params, ...plan.params] : [plan.params[0]!, ...params, ...plan.params.slice(1)]
    const rows = await (await this.#aggregates()).all<CorpusAggregateRow>(`${plan.with}${sql}`, all)
    // An ungrouped aggregate over nothing still yields one row (with null sums): keep rows with receipts.
    return rows.filter(r => r.total > 0)
  }

  /**
   * Up to `limit` rows after `afterSeq` whose core form is not stored yet, ascending; with `kernelKey`,
   * only rows whose stored JSON names that signer (what a rotation can still convert: the conversion
   * checks the key itself, this only spares reading the others).
   */
  async listCorePending(afterSeq: number, limit: number, kernelKey?: string): Promise<CorePendingRow[]> {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new StoreInputError('afterSeq', 'a non-negative integer', afterSeq)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    // The partial index holds only rows without a core form; without it this walks the table from `afterSeq`.
    const from = this.#indexes.has('receipts_core_pending') ? 'receipts INDEXED BY receipts_core_pending' : 'receipts'
    const signer = kernelKey === undefined ? '' : 'AND instr(http_json, ?) > 0'
    const params: SqlValue[] = kernelKey === undefined ? [afterSeq, limit] : [afterSeq, `"kernel_key":${JSON.stringify(kernelKey)}`, limit]
    return this.#reader.all<CorePendingRow>(`SELECT seq, receipt_id AS receiptId, http_json AS httpJson FROM ${from} WHERE core_json IS NULL AND seq > ? ${signer} ORDER BY seq LIMIT ?`, params)
  }

  /** Final receipts that name `decisionReceiptId`, searched among the `window` receipts after the decision's seq. */
  async findFinals(decisionSeq: number, decisionReceiptId: string, window = 50_000): Promise<StoredReceipt[]> {
    return this.#reader.all<StoredReceipt>(
      `SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq > ? AND seq <= ? AND +decision_receipt_id = ? ORDER BY seq`,
      [decisionSeq, decisionSeq + window, decisionReceiptId],
    )
  }

  /** Core-only receipts of chain `chainId`, in seq order: a substring search, each hit checked (chain-members.ts). */
  async listChain(chainId: string, limit: number): Promise<StoredReceipt[]> {
    checkCursorPage(0, limit)
    const rows = await this.#reader.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE http_json IS NULL AND instr(core_json, ?) > 0 ORDER BY seq LIMIT ?`, [chainMemberText(chainId), limit])
    return rows.filter(row => isChainMember(row.coreJson, chainId))
  }

  // The last bucket a bucket plan probes: the one of the snapshot bound, else of the newest row.
  async #maxBucket(filter: CorpusFilter): Promise<number> {
    const through = filter.throughSeq ?? (await this.latestSeq())
    return Math.floor(through / ID_BUCKET_ROWS)
  }

  #counts(): Promise<SqliteDatabase> {
    if (this.#openReader === undefined) return Promise.resolve(this.#reader)
    this.#countReader ??= this.#openReader()
    return this.#countReader
  }

  #aggregates(): Promise<SqliteDatabase> {
    if (this.#openReader === undefined) return Promise.resolve(this.#reader)
    this.#aggregateReader ??= this.#openReader()
    return this.#aggregateReader
  }

  // A time filter narrows a page walk to the seq window its receipts occupy: receipts are appended in
  // roughly timestamp order, so [min(seq), max(seq)] of the window is tight, and a cursor page or an
  // index range then starts inside it instead of walking every older receipt. The window is found
  // once through the covering time index; `lo` never changes afterwards (rows are never deleted) and
  // `hi` is extended over rows appended since. Returns undefined when nothing can match.
  async #narrow(filter: CorpusFilter): Promise<CorpusFilter | undefined> {
    if (filter.since === undefined && filter.until === undefined) return filter
    if (emptyWindow(filter)) return undefined
    // Selective drivers (bucket seeks on a capability or an agent) check the time residually: finding
    // the window would cost more than it saves.
    if (filter.capabilityId !== undefined || filter.subject !== undefined) return filter
    if (!this.#indexes.has(COVERING)) return filter
    const window = await this.#timeWindow(filter.since, filter.until)
    if (window === undefined) return undefined
    const afterSeq = Math.max(filter.afterSeq ?? 0, window.lo - 1)
    const throughSeq = Math.min(filter.throughSeq ?? Number.MAX_SAFE_INTEGER, window.hi)
    if (afterSeq >= throughSeq) return undefined
    return { ...filter, afterSeq, throughSeq }
  }

  async #timeWindow(since: number | undefined, until: number | undefined): Promise<{ lo: number; hi: number } | undefined> {
    const key = `${since ?? ''}:${until ?? ''}`
    const latest = await this.latestSeq()
    const terms: string[] = []
    const params: SqlValue[] = []
    if (since !== undefined) {
      terms.push('timestamp >= ?')
      params.push(since)
    }
    if (until !== undefined) {
      terms.push('timestamp <= ?')
      params.push(until)
    }
    const cached = this.#timeWindows.get(key)
    if (cached !== undefined) {
      if (cached.through < latest) {
        // Only receipts appended since can move `hi`; scan them by seq (a short rowid range).
        const plus = terms.map(t => `+${t}`)
        const row = await (await this.#counts()).get<{ hi: number | null }>(
          `SELECT max(seq) AS hi FROM receipts WHERE seq > ? AND seq <= ? AND ${plus.join(' AND ')}`,
          [cached.through, latest, ...params],
        )
        if (row?.hi !== null && row?.hi !== undefined) cached.hi = Math.max(cached.hi, row.hi)
        cached.through = latest
      }
      return cached
    }
    const row = await (await this.#counts()).get<{ lo: number | null; hi: number | null }>(
      `SELECT min(seq) AS lo, max(seq) AS hi FROM receipts INDEXED BY ${COVERING} WHERE ${terms.join(' AND ')} AND seq <= ?`,
      [...params, latest],
    )
    if (row === undefined || row.lo === null || row.hi === null) return undefined
    const window = { lo: row.lo, hi: row.hi, through: latest }
    if (this.#timeWindows.size >= TIME_WINDOW_CACHE_SIZE) this.#timeWindows.delete(this.#timeWindows.keys().next().value as string)
    this.#timeWindows.set(key, window)
    return window
  }

  /** Closes the count and aggregate readers opened on first use (the page reader belongs to the store). */
  async close(): Promise<void> {
    for (const extra of [this.#countReader, this.#aggregateReader]) {
      if (extra !== undefined) await (await extra.catch(() => undefined))?.close()
    }
  }
}

/** A cursor page's bounds: a seq of 0 or more, 1 to 10,000 rows. */
function checkCursorPage(cursorSeq: number, limit: number): void {
    if (!Number.isSafeInteger(cursorSeq) || cursorSeq < 0) throw new StoreInputError('cursor', 'a non-negative integer', cursorSeq)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
}
