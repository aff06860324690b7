// The receipt store (revision 3): every signed HttpReceipt, byte for byte as it was serialized, in `seq`
// (cursor) order. Writes go through group commit so `/gate/evaluate` answers only after its receipt is
// committed: a receipt id a client has seen survives `kill -9`.
//
// Point loads by receipt id: an index on the random 64-hex id costs ingest dearly once it outgrows the
// batch, since every commit dirties about one index page per receipt. Measured at 200k receipts, group
// commit of 50 (sqlite3): no id index 4.2 KB written per receipt, UNIQUE(receipt_id) 18.4 KB and 1.5x
// slower (worsening as it grows), an index on a 52-bit integer prefix 13.4 KB. Instead each row carries
// `id_prefix` (the id's first 52 bits) and `id_bucket` (seq / 4096), indexed together: a commit touches
// only the current bucket's ~15 index pages (6.0 KB per receipt, throughput within noise of no index),
// and a lookup probes the buckets newest first inside one statement: 0.1 ms for a recent receipt,
// 0.35 ms worst case at 1M receipts (one B-tree seek per 4096). bench/src/stores/receipt-ingest.ts.
import { httpReceiptColumns, InvalidConfigError, type HttpReceipt } from '@gate/sdk'
import type {
  CorpusAggregateRow,
  CorpusFilter,
  CorpusGrouping,
  CorpusRow,
  ListedReceiptFilter,
  ListedReceiptInput,
  ListedReceiptKind,
  ListedReceiptRow,
  ReceiptOutcome,
} from '@gate/trust'
import { DuplicateRecordError, ReceiptPersistenceError, StoreInputError } from '../errors.js'
import { GroupCommit } from './group-commit.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { openDatabase, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase, type SqlValue } from './sqlite-driver.js'
import { pickOptions } from './store-options.js'
import { APPEND_COLUMNS, appendRowsAsValues, ID_BUCKET_ROWS } from './receipt-append.js'
import { AppendThreadUnavailable, createAppendThread, type AppendThread } from './append-thread.js'
import { createWalCheckpointer, type CheckpointStats, type WalCheckpointer } from './wal-checkpointer.js'

/** `allow`, `deny`, `cancelled`, `incomplete` (spec 03 outcome filter; the HTTP verdict `cancel` is `cancelled`). */
export type { ReceiptOutcome } from '@gate/trust'

/** `decision` for an evaluate receipt, `final` for the proxy's finalized receipt of the same request. */
export type ReceiptRowKind = 'decision' | 'final'

/** One receipt to append. Nullable fields may be omitted. */
export interface ReceiptRow {
  /** 64 lowercase hex: the HttpReceipt's `id`. */
  receiptId: string
  /** Unix seconds. */
  timestamp: number
  requestId: string
  method: string
  routePattern: string
  /** Always `http` for HTTP receipts. */
  toolServer: string
  /** `{METHOD} {route_pattern}`. */
  toolName: string
  outcome: ReceiptOutcome
  capabilityId?: string | null
  tenant?: string | null
  /** The agent subject key of the capability exercised (hex Ed25519). */
  subjectKey?: string | null
  costUnits?: number | null
  costCurrency?: string | null
  attemptedCostUnits?: number | null
  kind: ReceiptRowKind
  decisionReceiptId?: string | null
  /** The signed HttpReceipt exactly as serialized; stored and served unchanged. */
  httpJson: string
  /** The core receipt form, when known. */
  coreJson?: string | null
}

/** A stored receipt row: every field of ReceiptRow, null where it was omitted, and its sequence number. */
export type StoredReceipt = { seq: number } & { [K in keyof ReceiptRow]-?: Exclude<ReceiptRow[K], undefined> }

/** What the caller knows beyond the receipt itself. */
export interface ReceiptRowContext {
  tenant?: string | null
  subjectKey?: string | null
  costUnits?: number | null
  costCurrency?: string | null
  attemptedCostUnits?: number | null
  /** Default: `final` when the receipt's metadata names `gate_decision_receipt_id`, else `decision`. */
  kind?: ReceiptRowKind
  decisionReceiptId?: string | null
  coreJson?: string | null
}

// The query shapes are trust-control's corpus port types (this store implements that port).
/** Filters of the trust-control corpus queries (spec 03): present members combine with AND, bounds are inclusive. */
export type ReceiptQueryFilter = CorpusFilter
/** One receipt of a query page, with the columns reports read. */
export type ReceiptPageRow = CorpusRow
/** How `aggregate` groups: one total, per time bucket, per tool, per agent, or per (capability, agent, currency). */
export type ReceiptGrouping = CorpusGrouping
/** Counts and cost sums of one group (costs in minor units, summed across currencies except for `cost`). */
export type ReceiptAggregateRow = CorpusAggregateRow

/** A row of the core-receipt backlog. */
export interface CorePendingRow {
  seq: number
  httpJson: string
}

// The tool and child receipt types are trust-control's port types (this store implements that port).
export type { ListedReceiptFilter, ListedReceiptInput, ListedReceiptKind, ListedReceiptRow } from '@gate/trust'

/** Options of `openReceiptStore`. */
export interface ReceiptStoreOptions extends DatabaseOptions {
  /** Largest group-commit batch, default 512. */
  maxBatchSize?: number
  /** Create the query indexes (timestamp, capability, tool, tenant, subject) at open, default false: they cost ingest. */
  queryIndexes?: boolean
  /** Called once per failed commit (the store is then unhealthy until a commit succeeds). */
  onError?: (err: Error) => void
  /** Called when a commit succeeds after a failure. */
  onRecover?: () => void
  /**
   * Checkpoint the WAL from a thread of its own (wal-checkpointer.ts) instead of only inside the commit
   * that crosses `walAutocheckpointPages`; default true for a file, never for an in-memory store.
   */
  backgroundCheckpoints?: boolean
  /** Called when the checkpoint thread cannot start or fails (checkpoints then happen in commits only). */
  onCheckpointError?: (err: Error) => void
  /**
   * On node:sqlite, commit appends on a thread of their own (append-thread.ts) instead of the event
   * loop; default false. Never for an in-memory store or on the `sqlite3` driver. `gate api protect`
   * turns it on (two receipts per request on an event loop that also forwards the traffic); `gate
   * sidecar` leaves it off (one receipt per evaluation: the hop measured slower than the INSERT).
   */
  appendThread?: boolean
  /** Called when the append thread cannot start or fails (appends then go back to the main thread). */
  onAppendThreadError?: (err: Error) => void
}

/** Defaults of the receipt-specific options. */
export const RECEIPT_STORE_DEFAULTS = Object.freeze({ maxBatchSize: 512, queryIndexes: false, backgroundCheckpoints: true, appendThread: false })

interface ReceiptStoreSettings {
  maxBatchSize: number
  queryIndexes: boolean
  backgroundCheckpoints: boolean
  appendThread: boolean
  onError?: (err: Error) => void
  onRecover?: () => void
  onCheckpointError?: (err: Error) => void
  onAppendThreadError?: (err: Error) => void
}

export { ID_BUCKET_ROWS } from './receipt-append.js'

const RECEIPT_HEX = /^[0-9a-f]{64}$/
const OUTCOMES: ReadonlySet<string> = new Set(['allow', 'deny', 'cancelled', 'incomplete'])
const KINDS: ReadonlySet<string> = new Set(['decision', 'final'])

const PAGE_COLUMNS = `seq, receipt_id AS receiptId, timestamp, tenant, outcome, capability_id AS capabilityId, subject_key AS subjectKey,
  tool_server AS toolServer, tool_name AS toolName, cost_units AS costUnits, cost_currency AS costCurrency,
  attempted_cost_units AS attemptedCostUnits, http_json AS httpJson, core_json AS coreJson`

const SELECT_COLUMNS = `seq, receipt_id AS receiptId, timestamp, request_id AS requestId, method, route_pattern AS routePattern,
  tool_server AS toolServer, tool_name AS toolName, outcome, capability_id AS capabilityId, tenant, subject_key AS subjectKey,
  cost_units AS costUnits, cost_currency AS costCurrency, attempted_cost_units AS attemptedCostUnits, kind,
  decision_receipt_id AS decisionReceiptId, http_json AS httpJson, core_json AS coreJson`

/** Schema revision 3. */
export const RECEIPT_SCHEMA: StoreSchema = Object.freeze({
  store: 'receipts',
  create: [
    `CREATE TABLE receipts (
      seq INTEGER PRIMARY KEY,
      receipt_id TEXT NOT NULL,
      id_bucket INTEGER NOT NULL,
      id_prefix INTEGER NOT NULL,
      timestamp INTEGER NOT NULL,
      request_id TEXT NOT NULL,
      method TEXT NOT NULL,
      route_pattern TEXT NOT NULL,
      tool_server TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      outcome TEXT NOT NULL,
      capability_id TEXT,
      tenant TEXT,
      subject_key TEXT,
      cost_units INTEGER,
      cost_currency TEXT,
      attempted_cost_units INTEGER,
      kind TEXT NOT NULL,
      decision_receipt_id TEXT,
      http_json TEXT NOT NULL,
      core_json TEXT
    )`,
    'CREATE INDEX receipts_by_id ON receipts (id_bucket, id_prefix)',
  ],
  migrations: [],
})

/** The core-receipt backlog: rows whose core form is not stored yet (partial, so it stays a few pages long). */
export const RECEIPT_CORE_PENDING_INDEX = 'CREATE INDEX IF NOT EXISTS receipts_core_pending ON receipts (seq) WHERE core_json IS NULL'

/** Indexes for the spec 03 query filters, one per filter column; not created by default (they cost ingest). */
export const RECEIPT_QUERY_INDEXES: readonly string[] = Object.freeze([
  'CREATE INDEX IF NOT EXISTS receipts_by_timestamp ON receipts (timestamp)',
  'CREATE INDEX IF NOT EXISTS receipts_by_capability ON receipts (capability_id, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_tool ON receipts (tool_server, tool_name, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_tenant ON receipts (tenant, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_subject ON receipts (subject_key, seq)',
])

/**
 * The indexes trust-control creates (`createTrustIndexes`), chosen by measured ingest cost
 * (bench/src/trust/query.ts, docs/trust-control.md):
 * - `receipts_by_time_covering`: every column a filter or an aggregate reads, led by the timestamp.
 *   Timestamps grow with seq, so inserts append at its end (cheap), and counts and analytics over a
 *   time window, or over everything, read this index alone, never the large table rows.
 * - `receipts_by_*_bucket` on (id_bucket, column) for the high-cardinality filters that need seeks
 *   (capability, agent subject, tenant): like `receipts_by_id`, a commit dirties only the current
 *   bucket's pages instead of one page per distinct value; queries probe bucket by bucket.
 * - `receipts_by_cost` (partial: only receipts with financial metadata) and `receipts_core_pending`
 *   (partial: only rows whose core form is missing, so it stays a few pages long).
 * Tool name and outcome get no index of their own: the covering index counts them, pages walk seq.
 */
export const RECEIPT_TRUST_INDEXES: readonly string[] = Object.freeze([
  `CREATE INDEX IF NOT EXISTS receipts_by_time_covering ON receipts
    (timestamp, outcome, tool_server, tool_name, subject_key, capability_id, tenant, cost_currency, cost_units, attempted_cost_units)`,
  'CREATE INDEX IF NOT EXISTS receipts_by_capability_bucket ON receipts (id_bucket, capability_id)',
  'CREATE INDEX IF NOT EXISTS receipts_by_subject_bucket ON receipts (id_bucket, subject_key)',
  'CREATE INDEX IF NOT EXISTS receipts_by_tenant_bucket ON receipts (id_bucket, tenant)',
  'CREATE INDEX IF NOT EXISTS receipts_by_cost ON receipts (cost_currency, cost_units) WHERE cost_units IS NOT NULL',
  RECEIPT_CORE_PENDING_INDEX,
])

// Probe each bucket's (id_bucket, id_prefix) index entry, newest bucket first, in one statement, and
// stop at the first match (the recursive CTE is evaluated lazily): recent receipts are found after a
// few probes, an unknown id costs one probe per bucket. CROSS JOIN pins the join order so SQLite never
// scans the table instead. (`bucket` has only column `b`, so receipt columns need no qualifier.)
const GET_BY_ID_SQL = `WITH RECURSIVE bucket(b) AS (
    SELECT (SELECT max(id_bucket) FROM receipts)
    UNION ALL SELECT b - 1 FROM bucket WHERE b > 0
  )
  SELECT ${SELECT_COLUMNS}
  FROM bucket CROSS JOIN receipts AS r ON r.id_bucket = bucket.b AND r.id_prefix = ?
  WHERE r.receipt_id = ? LIMIT 1`

type ReceiptWrite = { type: 'append'; row: StoredReceiptInput } | { type: 'core'; seq: number; coreJson: string }

type StoredReceiptInput = Omit<StoredReceipt, 'seq'>

/** Builds the row for a signed HttpReceipt; `httpJson` must be the exact bytes that were signed and served. */
export function createReceiptRow(receipt: HttpReceipt, httpJson: string, context: ReceiptRowContext = {}): ReceiptRow {
  const metadataDecisionId = receipt.metadata?.['gate_decision_receipt_id']
  const decisionReceiptId = context.decisionReceiptId ?? (typeof metadataDecisionId === 'string' ? metadataDecisionId : null)
  return {
    ...httpReceiptColumns(receipt),
    tenant: context.tenant ?? null,
    subjectKey: context.subjectKey ?? null,
    costUnits: context.costUnits ?? null,
    costCurrency: context.costCurrency ?? null,
    attemptedCostUnits: context.attemptedCostUnits ?? null,
    kind: context.kind ?? (decisionReceiptId === null ? 'decision' : 'final'),
    decisionReceiptId,
    httpJson,
    coreJson: context.coreJson ?? null,
  }
}

/** Opens (creating or migrating) the receipt store at `path`; `:memory:` gives an ephemeral one. */
export async function openReceiptStore(path: string, options: ReceiptStoreOptions = {}): Promise<ReceiptStore> {
  const { own, database } = pickOptions('receipt store options', options, ['maxBatchSize', 'queryIndexes', 'onError', 'onRecover', 'backgroundCheckpoints', 'onCheckpointError', 'appendThread', 'onAppendThreadError'])
  const databaseOptions = resolveDatabaseOptions(database)
  const settings: ReceiptStoreSettings = { ...RECEIPT_STORE_DEFAULTS, ...own }
  for (const flag of ['queryIndexes', 'backgroundCheckpoints', 'appendThread'] as const) {
    if (typeof settings[flag] !== 'boolean') throw new InvalidConfigError(`receipt store options.${flag}`, 'a boolean', settings[flag])
  }
  for (const hook of ['onError', 'onRecover', 'onCheckpointError', 'onAppendThreadError'] as const) {
    if (settings[hook] !== undefined && typeof settings[hook] !== 'function') {
      throw new InvalidConfigError(`receipt store options.${hook}`, 'a function', settings[hook])
    }
  }
  const writer = await openStoreDatabase(RECEIPT_SCHEMA, path, databaseOptions)
  let reader = writer
  let checkpointer: WalCheckpointer | undefined
  try {
    if (settings.queryIndexes) for (const sql of RECEIPT_QUERY_INDEXES) await writer.exec(sql)
    if (!writer.isEphemeral) {
      // A second connection for reads: under WAL it sees only committed rows and never waits for the writer.
      reader = await openDatabase(path, databaseOptions, { store: 'receipts' })
      await reader.exec('PRAGMA query_only = ON')
    }
    const latest = await writer.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipts')
    const openReader = writer.isEphemeral
      ? undefined
      : async () => {
          const db = await openDatabase(path, databaseOptions, { store: 'receipts' })
          await db.exec('PRAGMA query_only = ON')
          return db
        }
    if (!writer.isEphemeral && settings.backgroundCheckpoints) {
      checkpointer = createWalCheckpointer(path, databaseOptions, { onError: settings.onCheckpointError })
      // The writer's own checkpoint becomes the backstop: far enough out that the thread gets there
      // first (at 30,000 receipts/s the WAL grows by ~7,000 pages between two of its runs).
      await writer.exec(`PRAGMA wal_autocheckpoint = ${databaseOptions.walAutocheckpointPages * WAL_BACKSTOP_FACTOR}`)
    }
    const appendThread =
      !writer.isEphemeral && writer.driver === 'node:sqlite' && settings.appendThread
        ? createAppendThread(path, databaseOptions, {
            walAutocheckpointPages: databaseOptions.walAutocheckpointPages * (checkpointer === undefined ? 1 : WAL_BACKSTOP_FACTOR),
            onError: settings.onAppendThreadError,
          })
        : undefined
    const store = new ReceiptStore(writer, reader, latest?.seq ?? 0, settings, openReader, checkpointer, appendThread)
    await store.indexNames()
    return store
  } catch (err) {
    await checkpointer?.close()
    if (reader !== writer) await reader.close().catch(() => undefined)
    await writer.close().catch(() => undefined)
    checkpointer?.releaseFile()
    throw err
  }
}

/** With a checkpoint thread, the writer checkpoints itself only past this many times `walAutocheckpointPages`. */
export const WAL_BACKSTOP_FACTOR = 4

/** Durable receipts: group-committed appends, point loads by id, cursor pages by `seq`. */
export class ReceiptStore {
  readonly #writer: SqliteDatabase
  readonly #reader: SqliteDatabase
  readonly #queue: GroupCommit<ReceiptWrite, number>
  // The highest seq this process committed or saw; each transaction re-reads the real end of the
  // table before appending, so id_bucket is exact even with several writer processes.
  #latestSeq: number
  #closing: Promise<void> | undefined
  readonly #appendListeners = new Set<(lastSeq: number) => void>()
  // Index names present in the file (query planning hints only name indexes that exist).
  #indexes = new Set<string>()
  // Seq window [lo, hi] of a time filter, see #timeWindow.
  readonly #timeWindows = new Map<string, { lo: number; hi: number; through: number }>()
  #listedReady: Promise<void> | undefined
  // Connections of their own for counts and for aggregates, opened on first use: a statement holds its
  // connection until done, so a count or an analytics scan of a million receipts (hundreds of ms) on
  // the page reader would stall every short page and point load queued behind it.
  readonly #openReader: (() => Promise<SqliteDatabase>) | undefined
  #countReader: Promise<SqliteDatabase> | undefined
  #aggregateReader: Promise<SqliteDatabase> | undefined
  readonly #checkpointer: WalCheckpointer | undefined
  readonly #appendThread: AppendThread | undefined

  constructor(
    writer: SqliteDatabase,
    reader: SqliteDatabase,
    latestSeq: number,
    settings: ReceiptStoreSettings,
    openReader?: () => Promise<SqliteDatabase>,
    checkpointer?: WalCheckpointer,
    appendThread?: AppendThread,
  ) {
    this.#checkpointer = checkpointer
    this.#appendThread = appendThread
    this.#writer = writer
    this.#reader = reader
    this.#openReader = openReader
    this.#latestSeq = latestSeq
    this.#queue = new GroupCommit<ReceiptWrite, number>({
      store: 'receipts',
      maxBatchSize: settings.maxBatchSize,
      commitBatch: writes => this.#commit(writes),
      onError: settings.onError,
      onRecover: settings.onRecover,
    })
  }

  get path(): string {
    return this.#writer.path
  }

  /** The SQLite driver in use. */
  get driver(): SqliteDatabase['driver'] {
    return this.#writer.driver
  }

  /** True for an in-memory store (the sidecar then reports `receipt_backend: ephemeral`). */
  get isEphemeral(): boolean {
    return this.#writer.isEphemeral
  }

  /** False after a failed commit until a later one succeeds: /gate/health answers 503, evaluate fails closed. */
  get healthy(): boolean {
    return this.#queue.healthy
  }

  /** The error of the last failed commit, while unhealthy. */
  get lastError(): Error | undefined {
    return this.#queue.lastError
  }

  /** The checkpoint thread's counters, or undefined when there is none (in memory, or switched off). */
  get checkpointStats(): Readonly<CheckpointStats> | undefined {
    return this.#checkpointer?.stats
  }

  /** Group-commit counters (batches, items, failedBatches, largestBatch). */
  get stats(): { batches: number; items: number; failedBatches: number; largestBatch: number } {
    return this.#queue.stats
  }

  /** Appends one receipt; resolves with its `seq` once committed, rejects with gate_receipt_persistence_failed. */
  async append(row: ReceiptRow): Promise<{ seq: number }> {
    const seq = await this.#queue.enqueue({ type: 'append', row: normalizeRow(row) })
    return { seq }
  }

  /** Appends several receipts (sharing a transaction when they fit one batch); resolves once all committed. */
  async appendMany(rows: readonly ReceiptRow[]): Promise<{ seq: number }[]> {
    const writes = rows.map((row): ReceiptWrite => ({ type: 'append', row: normalizeRow(row) }))
    const seqs = await this.#queue.enqueueMany(writes)
    return seqs.map(seq => ({ seq }))
  }

  /** Records the core receipt form of the row at `seq`; resolves true when that row exists. */
  async setCoreJson(seq: number, coreJson: string): Promise<boolean> {
    if (!Number.isSafeInteger(seq) || seq < 1) throw new StoreInputError('seq', 'a positive integer', seq)
    if (typeof coreJson !== 'string' || coreJson === '') throw new StoreInputError('coreJson', 'a non-empty string', coreJson)
    return (await this.#queue.enqueue({ type: 'core', seq, coreJson })) === 1
  }

  /** The committed receipt with this id (the newest copy, should the same receipt have been appended twice). */
  async getById(receiptId: string): Promise<StoredReceipt | undefined> {
    if (typeof receiptId !== 'string' || !RECEIPT_HEX.test(receiptId)) return undefined
    return this.#reader.get<StoredReceipt>(GET_BY_ID_SQL, [idPrefix(receiptId), receiptId])
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
    if (!Number.isSafeInteger(cursorSeq) || cursorSeq < 0) throw new StoreInputError('cursor', 'a non-negative integer', cursorSeq)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    return this.#reader.all<StoredReceipt>(`SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq > ? ORDER BY seq LIMIT ?`, [cursorSeq, limit])
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

  /** Creates the query-filter indexes (idempotent). They slow ingest: see the benchmark. */
  async createQueryIndexes(): Promise<void> {
    for (const sql of RECEIPT_QUERY_INDEXES) await this.#writer.exec(sql)
    await this.#loadIndexNames()
  }

  /** Creates trust-control's indexes (RECEIPT_TRUST_INDEXES); idempotent. */
  async createTrustIndexes(): Promise<void> {
    for (const sql of RECEIPT_TRUST_INDEXES) await this.#writer.exec(sql)
    await this.#loadIndexNames()
  }

  /** Creates the core-backlog index only (what the core backfill needs); idempotent. */
  async createCorePendingIndex(): Promise<void> {
    await this.#writer.exec(RECEIPT_CORE_PENDING_INDEX)
    await this.#loadIndexNames()
  }

  /** Names of the indexes on the receipts table. */
  async indexNames(): Promise<string[]> {
    await this.#loadIndexNames()
    return [...this.#indexes].sort()
  }

  /** Calls `listener` with the last committed seq after each commit that appended receipts; returns an unsubscribe. */
  watchAppends(listener: (lastSeq: number) => void): () => void {
    this.#appendListeners.add(listener)
    return () => this.#appendListeners.delete(listener)
  }

  // ---- trust-control reads (spec 03 receipt query, analytics, operator report) ----

  /** Up to `limit` receipts matching `filter` by seq: the oldest first (`asc`, default) or the newest first. */
  async queryPage(filter: ReceiptQueryFilter, limit: number, order: 'asc' | 'desc' = 'asc'): Promise<ReceiptPageRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    if (order !== 'asc' && order !== 'desc') throw new StoreInputError('order', 'asc or desc', order)
    const narrowed = await this.#narrow(filter)
    if (narrowed === undefined) return []
    const maxBucket = await this.#maxBucket(narrowed)
    const pages: ReceiptPageRow[][] = []
    for (const branch of subjectBranches(narrowed)) {
      const plan = planQuery(branch, order === 'asc' ? 'page' : 'page-desc', this.#indexes, maxBucket)
      // Bucket plans yield rows bucket by bucket, each bucket in seq order, so no sort is needed; buckets
      // are exact (floor(seq / ID_BUCKET_ROWS)) and the order is checked anyway, falling back to a sort.
      const orderBy = plan.bucketed && order === 'asc' ? '' : `ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'}`
      let page = await this.#reader.all<ReceiptPageRow & { idBucket?: number }>(
        `${plan.with}SELECT ${PAGE_COLUMNS}${orderBy === '' ? ', id_bucket AS idBucket' : ''} ${plan.from} ${plan.where} ${orderBy} LIMIT ?`,
        [...plan.params, limit],
      )
      if (orderBy === '' && !isBucketOrdered(page)) {
        const fallback = planQuery(branch, 'page', new Set(), maxBucket)
        page = await this.#reader.all<ReceiptPageRow>(`SELECT ${PAGE_COLUMNS} ${fallback.from} ${fallback.where} ORDER BY seq LIMIT ?`, [...fallback.params, limit])
      }
      pages.push(page)
    }
    if (pages.length === 1) return pages[0]!
    return pages.flat().sort((a, b) => (order === 'asc' ? a.seq - b.seq : b.seq - a.seq)).slice(0, limit)
  }

  /** Number of receipts matching `filter`. */
  async countMatching(filter: ReceiptQueryFilter): Promise<number> {
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
  async aggregate(filter: ReceiptQueryFilter, grouping: ReceiptGrouping, bucketSeconds = 86400, perBucket = false): Promise<ReceiptAggregateRow[]> {
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
    const rows = await (await this.#aggregates()).all<ReceiptAggregateRow>(`${plan.with}${sql}`, all)
    // An ungrouped aggregate over nothing still yields one row (with null sums): keep rows with receipts.
    return rows.filter(r => r.total > 0)
  }

  /** Up to `limit` rows after `afterSeq` whose core form is not stored yet, ascending (the core backfill's work list). */
  async listCorePending(afterSeq: number, limit: number): Promise<CorePendingRow[]> {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new StoreInputError('afterSeq', 'a non-negative integer', afterSeq)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10000) throw new StoreInputError('limit', 'an integer from 1 to 10000', limit)
    // The partial index holds only the backlog; without it this walks the table from `afterSeq`.
    const from = this.#indexes.has('receipts_core_pending') ? 'receipts INDEXED BY receipts_core_pending' : 'receipts'
    return this.#reader.all<CorePendingRow>(`SELECT seq, http_json AS httpJson FROM ${from} WHERE core_json IS NULL AND seq > ? ORDER BY seq LIMIT ?`, [
      afterSeq,
      limit,
    ])
  }

  /** Final receipts that name `decisionReceiptId`, searched among the `window` receipts after the decision's seq. */
  async findFinals(decisionSeq: number, decisionReceiptId: string, window = 50_000): Promise<StoredReceipt[]> {
    return this.#reader.all<StoredReceipt>(
      `SELECT ${SELECT_COLUMNS} FROM receipts WHERE seq > ? AND seq <= ? AND +decision_receipt_id = ? ORDER BY seq`,
      [decisionSeq, decisionSeq + window, decisionReceiptId],
    )
  }

  // ---- tool and child receipts (spec 03 ReceiptListResponse routes) ----

  /** Creates the table of appended tool and child receipts (idempotent; not part of revision 3's required schema). */
  ensureListedReceipts(): Promise<void> {
    this.#listedReady ??= (async () => {
      for (const sql of LISTED_SCHEMA) await this.#writer.exec(sql)
    })()
    return this.#listedReady
  }

  /**
   * Appends a tool or child receipt; resolves with its seq once committed. An id already stored with the
   * same bytes answers its seq with `stored: false`; with other bytes it is refused (gate_conflict).
   */
  async appendListed(input: ListedReceiptInput): Promise<{ seq: number; stored: boolean }> {
    await this.ensureListedReceipts()
    if (input.kind !== 'tool' && input.kind !== 'child') throw new StoreInputError('kind', 'tool or child', input.kind)
    if (typeof input.receiptId !== 'string' || input.receiptId === '') throw new StoreInputError('receiptId', 'a non-empty string', input.receiptId)
    if (typeof input.json !== 'string' || input.json === '') throw new StoreInputError('json', 'a non-empty string', input.json)
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
        [
          input.kind,
          input.receiptId,
          input.timestamp ?? null,
          input.tenant ?? null,
          input.capabilityId ?? null,
          input.toolServer ?? null,
          input.toolName ?? null,
          input.sessionId ?? null,
          input.parentRequestId ?? null,
          input.requestId ?? null,
          input.json,
        ],
      )
      return { seq: lastInsertRowid, stored: true }
    })
  }

  /** The newest `limit` tool or child receipts matching `filter`, in ascending seq order. */
  async listListed(kind: ListedReceiptKind, filter: ListedReceiptFilter, limit: number): Promise<ListedReceiptRow[]> {
    await this.ensureListedReceipts()
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
    return rows.reverse()
  }

  // The last bucket a bucket plan probes: the one of the snapshot bound, else of the newest row.
  async #maxBucket(filter: ReceiptQueryFilter): Promise<number> {
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

  async #loadIndexNames(): Promise<void> {
    const rows = await this.#writer.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'receipts'")
    this.#indexes = new Set(rows.map(r => r.name))
  }

  // A time filter narrows a page walk to the seq window its receipts occupy: receipts are appended in
  // roughly timestamp order, so [min(seq), max(seq)] of the window is tight, and a cursor page or an
  // index range then starts inside it instead of walking every older receipt. The window is found
  // once through the covering time index; `lo` never changes afterwards (rows are never deleted) and
  // `hi` is extended over rows appended since. Returns undefined when nothing can match.
  async #narrow(filter: ReceiptQueryFilter): Promise<ReceiptQueryFilter | undefined> {
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

  /** True while appends are committed on the append thread (configured, and not failed). */
  get appendsOnThread(): boolean {
    return this.#appendThread !== undefined && !this.#appendThread.retired
  }

  /** Resolves when every receipt appended so far is committed (or failed). */
  flush(): Promise<void> {
    return this.#queue.flush()
  }

  /** Flushes, then closes both connections; later appends reject with gate_receipt_persistence_failed. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#queue.close()
      await this.#appendThread?.close()
      await this.#checkpointer?.close()
      for (const extra of [this.#countReader, this.#aggregateReader]) {
        if (extra !== undefined) await (await extra.catch(() => undefined))?.close()
      }
      try {
        if (this.#reader !== this.#writer) await this.#reader.close()
        await this.#writer.close()
      } finally {
        this.#checkpointer?.releaseFile()
      }
    })()
    return this.#closing
  }

  // One statement per kind of write, each atomic on its own, issued back to back: a batch costs one
  // round trip to the SQLite thread instead of one per statement (BEGIN, INSERT chunks, UPDATEs, COMMIT),
  // which under load is what bounded the commit latency every evaluate answer waits for. The rows travel
  // as one JSON parameter; SQLite assigns seq and id_bucket itself from the table's end, inside the
  // statement, so another process appending to the same file cannot skew the buckets. On node:sqlite
  // (statements run on the event loop, so there is no round trip to save) the rows go as multi-row
  // INSERT … VALUES in one transaction instead: unpacking JSON costs ~30 µs of the event loop per row
  // there, binding values ~12 (`npm run bench -- receipt-ingest` under Node 24); and that transaction
  // runs on the append thread (append-thread.ts), so the event loop pays only for one message.
  async #commit(writes: readonly ReceiptWrite[]): Promise<number[]> {
    const results = new Array<number>(writes.length)
    const appendAt: number[] = []
    const appendRows: unknown[][] = []
    const coreAt: number[] = []
    const coreRows: [number, string][] = []
    writes.forEach((write, i) => {
      if (write.type === 'append') {
        appendAt.push(i)
        appendRows.push(rowValues(write.row))
      } else {
        coreAt.push(i)
        coreRows.push([write.seq, write.coreJson])
      }
    })
    const pending: Promise<void>[] = []
    if (appendRows.length > 0) {
      pending.push(
        this.#append(appendRows).then(({ lastInsertRowid }) => {
          // seq = end + position + 1: consecutive, in array order; the last one is lastInsertRowid
          for (let k = 0; k < appendAt.length; k++) results[appendAt[k]!] = lastInsertRowid - (appendAt.length - 1 - k)
          if (lastInsertRowid > this.#latestSeq) this.#latestSeq = lastInsertRowid
        }),
      )
    }
    if (coreRows.length > 0) {
      // After the thread's append, not beside it: on node:sqlite a statement that finds the file locked
      // by the thread waits (busy timeout) on the event loop.
      if (this.#appendThread !== undefined) await Promise.all(pending)
      pending.push(
        this.#writer.run(CORE_SQL, [JSON.stringify(coreRows)]).then(async ({ changes }) => {
          if (changes === coreRows.length) {
            for (const i of coreAt) results[i] = 1
            return
          }
          // some rows were missing: say which
          for (let k = 0; k < coreAt.length; k++) {
            const row = await this.#writer.get<{ n: number }>('SELECT count(*) AS n FROM receipts WHERE seq = ?', [coreRows[k]![0]])
            results[coreAt[k]!] = row?.n ?? 0
          }
        }),
      )
    }
    await Promise.all(pending)
    this.#checkpointer?.notify()
    if (appendRows.length > 0) {
      for (const listener of this.#appendListeners) {
        try {
          listener(this.#latestSeq)
        } catch {
          // a listener's failure is its own; the commit stands
        }
      }
    }
    return results
  }

  // On node:sqlite, multi-row INSERT … VALUES in one transaction (receipt-append.ts), on the append
  // thread while it runs; on sqlite3 one JSON statement (APPEND_SQL).
  #append(rows: readonly unknown[][]): Promise<{ lastInsertRowid: number }> {
    if (this.#writer.driver !== 'node:sqlite') return this.#writer.run(APPEND_SQL, [JSON.stringify(rows)])
    const thread = this.#appendThread
    if (thread === undefined || thread.retired) return appendRowsAsValues(this.#writer, rows)
    // a batch the thread never received is committed here; one it received and lost is not retried
    return thread.append(rows).catch(err => {
      if (err instanceof AppendThreadUnavailable) return appendRowsAsValues(this.#writer, rows)
      throw err
    })
  }
}

const TIME_WINDOW_CACHE_SIZE = 256

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

type Purpose = 'page' | 'page-desc' | 'count' | 'aggregate'

type BranchFilter = ReceiptQueryFilter & { subjectOnly?: string; lineageIds?: readonly string[] }

// A seq range this short is cheaper to walk by rowid than through any index (count-cache deltas).
const SHORT_SEQ_RANGE = 20_000

const COVERING = 'receipts_by_time_covering'
const BUCKETS = { capability: 'receipts_by_capability_bucket', subject: 'receipts_by_subject_bucket', tenant: 'receipts_by_tenant_bucket' } as const

type Driver =
  | { kind: 'seq' }
  | { kind: 'time' }
  | { kind: 'cost' }
  | { kind: 'bucket'; index: string; column: 'capability_id' | 'subject_key' | 'tenant'; values: readonly string[] }

interface QueryPlan {
  /** The WITH clause (bucket list), or empty. */
  with: string
  from: string
  where: string
  params: SqlValue[]
  bucketed: boolean
}

// Which access path leads. SQLite without ANALYZE statistics guesses poorly between usable indexes, so
// the plan names one: the leading terms are written plainly, every other as `+column` (which SQLite
// cannot match to an index). Seeks for the selective filters (capability, agent, tenant) go bucket by
// bucket; counts and aggregates otherwise read the covering time index alone; pages otherwise walk
// the table in seq order from the cursor (with a time filter, inside the window's seq range).
function chooseDriver(f: BranchFilter, purpose: Purpose, indexes: ReadonlySet<string>): Driver {
  const bucket = (name: keyof typeof BUCKETS, column: 'capability_id' | 'subject_key' | 'tenant', values: readonly string[]): Driver | undefined =>
    indexes.has(BUCKETS[name]) ? { kind: 'bucket', index: BUCKETS[name], column, values } : undefined
  if (f.afterSeq !== undefined && f.throughSeq !== undefined && f.throughSeq - f.afterSeq <= SHORT_SEQ_RANGE) return { kind: 'seq' }
  const selective =
    (f.capabilityId !== undefined ? bucket('capability', 'capability_id', [f.capabilityId]) : undefined) ??
    (f.lineageIds !== undefined ? bucket('capability', 'capability_id', f.lineageIds) : undefined) ??
    (f.subjectOnly !== undefined ? bucket('subject', 'subject_key', [f.subjectOnly]) : undefined)
  if (selective !== undefined) return selective
  const tenant = f.tenant !== undefined ? bucket('tenant', 'tenant', [f.tenant]) : undefined
  if (purpose === 'page') return tenant ?? { kind: 'seq' }
  if (purpose === 'page-desc') return { kind: 'seq' }
  const window = f.since !== undefined || f.until !== undefined
  if (purpose === 'count' && !window && (f.costCurrency !== undefined || f.withCost === true) && indexes.has('receipts_by_cost')) return { kind: 'cost' }
  const onlyTenant = Object.entries(f).every(([k, v]) => v === undefined || ['tenant', 'afterSeq', 'throughSeq'].includes(k))
  if (purpose === 'count' && onlyTenant && tenant !== undefined) return tenant
  if (indexes.has(COVERING)) return { kind: 'time' }
  return tenant ?? { kind: 'seq' }
}

// The agent filter is an OR of two access paths (the stored subject key, or the lineage join on
// capability ids for rows without one); as two disjoint branches each keeps its index and seq order.
function subjectBranches(f: ReceiptQueryFilter): BranchFilter[] {
  if (f.subject === undefined || f.capabilityId !== undefined) return [f]
  const { subject, ...rest } = f
  const branches: BranchFilter[] = [{ ...rest, subjectOnly: subject.subjectKey }]
  if (subject.capabilityIds.length > 0) branches.push({ ...rest, lineageIds: subject.capabilityIds })
  return branches
}

function planQuery(f: BranchFilter, purpose: Purpose, indexes: ReadonlySet<string>, maxBucket: number): QueryPlan {
  const driver = chooseDriver(f, purpose, indexes)
  const terms: string[] = []
  const params: SqlValue[] = []
  const add = (term: string, ...values: SqlValue[]) => {
    terms.push(term)
    params.push(...values)
  }
  const time = driver.kind === 'time'
  const cost = driver.kind === 'cost'
  const bucketColumn = driver.kind === 'bucket' ? driver.column : undefined
  // the driver's own columns are matched in the join (bucket plans) or written plainly
  if (f.capabilityId !== undefined && bucketColumn !== 'capability_id') add('+capability_id = ?', f.capabilityId)
  if (f.toolServer !== undefined) add('+tool_server = ?', f.toolServer)
  if (f.toolName !== undefined) add('+tool_name = ?', f.toolName)
  if (f.outcome !== undefined) add('+outcome = ?', f.outcome)
  if (f.tenant !== undefined && bucketColumn !== 'tenant') add('+tenant = ?', f.tenant)
  if (f.since !== undefined) add(`${time ? '' : '+'}timestamp >= ?`, f.since)
  if (f.until !== undefined) add(`${time ? '' : '+'}timestamp <= ?`, f.until)
  // Plain cost terms imply `cost_units IS NOT NULL`, which is what lets SQLite use the partial index.
  const c = cost ? '' : '+'
  if (f.costCurrency !== undefined) add(`${c}cost_currency = ? AND ${c}cost_units IS NOT NULL`, f.costCurrency)
  if (f.minCost !== undefined) add(`${c}cost_units >= ?`, f.minCost)
  if (f.maxCost !== undefined) add(`${c}cost_units <= ?`, f.maxCost)
  if (f.withCost === true) add(`${c}cost_units IS NOT NULL`)
  if (f.withCapability === true) add('+capability_id IS NOT NULL')
  if (f.subjectOnly !== undefined && bucketColumn !== 'subject_key') add('+subject_key = ?', f.subjectOnly)
  if (f.lineageIds !== undefined) {
    add('+subject_key IS NULL')
    if (bucketColumn !== 'capability_id') add(`+capability_id IN (${f.lineageIds.map(() => '?').join(', ')})`, ...f.lineageIds)
  }
  if (f.subject !== undefined && f.subjectOnly === undefined && f.lineageIds === undefined) {
    const ids = f.subject.capabilityIds
    const lineage = ids.length === 0 ? '' : ` OR (+subject_key IS NULL AND +capability_id IN (${ids.map(() => '?').join(', ')}))`
    add(`(+subject_key = ?${lineage})`, f.subject.subjectKey, ...ids)
  }
  if (f.afterSeq !== undefined) add('seq > ?', f.afterSeq)
  if (f.throughSeq !== undefined) add('seq <= ?', f.throughSeq)
  const where = terms.length === 0 ? '' : `WHERE ${terms.join(' AND ')}`
  if (driver.kind === 'bucket') {
    // Probe (bucket, value) for every bucket in one statement; CROSS JOIN keeps the bucket list the outer
    // loop. Buckets start at 0: one seek each, and rows of an older file whose writer guessed a bucket
    // low are still found. (`bucket` has only column `b`, so receipt columns need no qualifier.)
    const match = driver.values.length === 1 ? '= ?' : `IN (${driver.values.map(() => '?').join(', ')})`
    return {
      with: 'WITH RECURSIVE bucket(b) AS (SELECT 0 UNION ALL SELECT b + 1 FROM bucket WHERE b < ?) ',
      from: `FROM bucket CROSS JOIN receipts AS r INDEXED BY ${driver.index} ON r.id_bucket = bucket.b AND r.${driver.column} ${match}`,
      where,
      params: [maxBucket, ...driver.values, ...params],
      bucketed: true,
    }
  }
  const from = time ? `FROM receipts INDEXED BY ${COVERING}` : cost ? 'FROM receipts INDEXED BY receipts_by_cost' : 'FROM receipts'
  return { with: '', from, where, params, bucketed: false }
}

function emptyWindow(f: ReceiptQueryFilter): boolean {
  return f.since !== undefined && f.until !== undefined && f.since > f.until
}

// Bucket order is seq order when every row sits in its exact bucket (a file written by an older
// binary with several writers may hold rows in a lower bucket); anything else is re-read sorted.
function isBucketOrdered(rows: (ReceiptPageRow & { idBucket?: number })[]): boolean {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    if (row.idBucket !== Math.floor(row.seq / ID_BUCKET_ROWS)) return false
    if (i > 0 && row.seq <= rows[i - 1]!.seq) return false
    delete row.idBucket
  }
  return true
}


// The JSON parameter of APPEND_SQL carries these columns per row, in this order; seq and id_bucket
// are computed by the statement (id_bucket = floor(seq / ID_BUCKET_ROWS)).
const APPEND_SQL = `INSERT INTO receipts (${APPEND_COLUMNS})
  SELECT m.s + j.key + 1, (m.s + j.key + 1) / ${ID_BUCKET_ROWS},
    j.value ->> 0,
    j.value ->> 1,
    j.value ->> 2,
    j.value ->> 3,
    j.value ->> 4,
    j.value ->> 5,
    j.value ->> 6,
    j.value ->> 7,
    j.value ->> 8,
    j.value ->> 9,
    j.value ->> 10,
    j.value ->> 11,
    j.value ->> 12,
    j.value ->> 13,
    j.value ->> 14,
    j.value ->> 15,
    j.value ->> 16,
    j.value ->> 17,
    j.value ->> 18
  FROM (SELECT coalesce(max(seq), 0) AS s FROM receipts) AS m, json_each(?) AS j
  ORDER BY j.key`

const CORE_SQL = 'UPDATE receipts SET core_json = j.value ->> 1 FROM json_each(?) AS j WHERE receipts.seq = j.value ->> 0'

function rowValues(row: StoredReceiptInput): unknown[] {
  return [
    row.receiptId,
    idPrefix(row.receiptId),
    row.timestamp,
    row.requestId,
    row.method,
    row.routePattern,
    row.toolServer,
    row.toolName,
    row.outcome,
    row.capabilityId,
    row.tenant,
    row.subjectKey,
    row.costUnits,
    row.costCurrency,
    row.attemptedCostUnits,
    row.kind,
    row.decisionReceiptId,
    row.httpJson,
    row.coreJson,
  ]
}

// The id's first 13 hex digits (52 bits): exact as a JavaScript number, stored as a SQLite INTEGER.
function idPrefix(receiptId: string): number {
  return Number.parseInt(receiptId.slice(0, 13), 16)
}

// Checked before queueing: one bad row must fail alone, not the batch it would have joined.
function normalizeRow(row: ReceiptRow): StoredReceiptInput {
  try {
    if (typeof row !== 'object' || row === null) throw new StoreInputError('receipt row', 'an object', row)
    if (typeof row.receiptId !== 'string' || !RECEIPT_HEX.test(row.receiptId)) {
      throw new StoreInputError('receiptId', '64 lowercase hex characters', row.receiptId)
    }
    if (!Number.isSafeInteger(row.timestamp) || row.timestamp < 0) throw new StoreInputError('timestamp', 'Unix seconds', row.timestamp)
    for (const field of ['requestId', 'method', 'routePattern', 'toolServer', 'toolName', 'httpJson'] as const) {
      if (typeof row[field] !== 'string' || row[field] === '') throw new StoreInputError(field, 'a non-empty string', row[field])
    }
    if (!OUTCOMES.has(row.outcome)) throw new StoreInputError('outcome', 'allow, deny, cancelled or incomplete', row.outcome)
    if (!KINDS.has(row.kind)) throw new StoreInputError('kind', 'decision or final', row.kind)
    return {
      receiptId: row.receiptId,
      timestamp: row.timestamp,
      requestId: row.requestId,
      method: row.method,
      routePattern: row.routePattern,
      toolServer: row.toolServer,
      toolName: row.toolName,
      outcome: row.outcome,
      capabilityId: optionalText('capabilityId', row.capabilityId),
      tenant: optionalText('tenant', row.tenant),
      subjectKey: optionalText('subjectKey', row.subjectKey),
      costUnits: optionalUnits('costUnits', row.costUnits),
      costCurrency: optionalText('costCurrency', row.costCurrency),
      attemptedCostUnits: optionalUnits('attemptedCostUnits', row.attemptedCostUnits),
      kind: row.kind,
      decisionReceiptId: optionalText('decisionReceiptId', row.decisionReceiptId),
      httpJson: row.httpJson,
      coreJson: optionalText('coreJson', row.coreJson),
    }
  } catch (err) {
    throw new ReceiptPersistenceError(err instanceof Error ? err.message : String(err), { cause: err })
  }
}

function optionalText(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw new StoreInputError(field, 'a string or null', value)
  return value
}

function optionalUnits(field: string, value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null
  if (!Number.isSafeInteger(value) || value < 0) throw new StoreInputError(field, 'a non-negative integer or null', value)
  return value
}
