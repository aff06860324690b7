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
import { InvalidConfigError, type HttpReceipt, type Verdict } from '@gate/sdk'
import { ReceiptPersistenceError, StoreInputError } from '../errors.js'
import { GroupCommit } from './group-commit.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { openDatabase, resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase, type SqlValue } from './sqlite-driver.js'
import { pickOptions } from './store-options.js'

/** `allow`, `deny`, `cancelled`, `incomplete` (spec 03 outcome filter; the HTTP verdict `cancel` is `cancelled`). */
export type ReceiptOutcome = 'allow' | 'deny' | 'cancelled' | 'incomplete'

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

/** A stored receipt row. */
export interface StoredReceipt {
  seq: number
  receiptId: string
  timestamp: number
  requestId: string
  method: string
  routePattern: string
  toolServer: string
  toolName: string
  outcome: ReceiptOutcome
  capabilityId: string | null
  tenant: string | null
  subjectKey: string | null
  costUnits: number | null
  costCurrency: string | null
  attemptedCostUnits: number | null
  kind: ReceiptRowKind
  decisionReceiptId: string | null
  httpJson: string
  coreJson: string | null
}

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
}

/** Defaults of the receipt-specific options. */
export const RECEIPT_STORE_DEFAULTS = Object.freeze({ maxBatchSize: 512, queryIndexes: false })

interface ReceiptStoreSettings {
  maxBatchSize: number
  queryIndexes: boolean
  onError?: (err: Error) => void
  onRecover?: () => void
}

/**
 * Rows per `id_bucket` (~15 index pages): a commit of 50 receipts dirties at most those pages instead of
 * one page per receipt. Smaller is cheaper to write and slower to look up (one probe per bucket).
 */
export const ID_BUCKET_ROWS = 4096

// Rows per INSERT statement: 64 rows x 21 columns = 1344 parameters, well under SQLite's 32766.
const INSERT_CHUNK_ROWS = 64

const RECEIPT_HEX = /^[0-9a-f]{64}$/
const OUTCOMES: ReadonlySet<string> = new Set(['allow', 'deny', 'cancelled', 'incomplete'])
const KINDS: ReadonlySet<string> = new Set(['decision', 'final'])

const INSERT_COLUMNS = [
  'receipt_id',
  'id_bucket',
  'id_prefix',
  'timestamp',
  'request_id',
  'method',
  'route_pattern',
  'tool_server',
  'tool_name',
  'outcome',
  'capability_id',
  'tenant',
  'subject_key',
  'cost_units',
  'cost_currency',
  'attempted_cost_units',
  'kind',
  'decision_receipt_id',
  'http_json',
  'core_json',
] as const

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

/** Indexes for the spec 03 query filters; not created by default (see RECEIPT_STORE_DEFAULTS). */
export const RECEIPT_QUERY_INDEXES: readonly string[] = Object.freeze([
  'CREATE INDEX IF NOT EXISTS receipts_by_timestamp ON receipts (timestamp)',
  'CREATE INDEX IF NOT EXISTS receipts_by_capability ON receipts (capability_id, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_tool ON receipts (tool_server, tool_name, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_tenant ON receipts (tenant, seq)',
  'CREATE INDEX IF NOT EXISTS receipts_by_subject ON receipts (subject_key, seq)',
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

/** The outcome recorded for a verdict: `cancel` becomes `cancelled` (spec 02, Verdict to decision). */
export function outcomeOfVerdict(verdict: Verdict): ReceiptOutcome {
  return verdict.verdict === 'cancel' ? 'cancelled' : verdict.verdict
}

/** Builds the row for a signed HttpReceipt; `httpJson` must be the exact bytes that were signed and served. */
export function createReceiptRow(receipt: HttpReceipt, httpJson: string, context: ReceiptRowContext = {}): ReceiptRow {
  const metadataDecisionId = receipt.metadata?.['gate_decision_receipt_id']
  const decisionReceiptId = context.decisionReceiptId ?? (typeof metadataDecisionId === 'string' ? metadataDecisionId : null)
  return {
    receiptId: receipt.id,
    timestamp: receipt.timestamp,
    requestId: receipt.request_id,
    method: receipt.method,
    routePattern: receipt.route_pattern,
    toolServer: 'http',
    toolName: `${receipt.method} ${receipt.route_pattern}`,
    outcome: outcomeOfVerdict(receipt.verdict),
    capabilityId: receipt.capability_id ?? null,
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
  const { own, database } = pickOptions('receipt store options', options, ['maxBatchSize', 'queryIndexes', 'onError', 'onRecover'])
  const databaseOptions = resolveDatabaseOptions(database)
  const settings: ReceiptStoreSettings = { ...RECEIPT_STORE_DEFAULTS, ...own }
  if (typeof settings.queryIndexes !== 'boolean') throw new InvalidConfigError('receipt store options.queryIndexes', 'a boolean', settings.queryIndexes)
  for (const hook of ['onError', 'onRecover'] as const) {
    if (settings[hook] !== undefined && typeof settings[hook] !== 'function') {
      throw new InvalidConfigError(`receipt store options.${hook}`, 'a function', settings[hook])
    }
  }
  const writer = await openStoreDatabase(RECEIPT_SCHEMA, path, databaseOptions)
  let reader = writer
  try {
    if (settings.queryIndexes) for (const sql of RECEIPT_QUERY_INDEXES) await writer.exec(sql)
    if (!writer.isEphemeral) {
      // A second connection for reads: under WAL it sees only committed rows and never waits for the writer.
      reader = await openDatabase(path, databaseOptions, { store: 'receipts' })
      await reader.exec('PRAGMA query_only = ON')
    }
    const latest = await writer.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipts')
    return new ReceiptStore(writer, reader, latest?.seq ?? 0, settings)
  } catch (err) {
    if (reader !== writer) await reader.close().catch(() => undefined)
    await writer.close().catch(() => undefined)
    throw err
  }
}

/** Durable receipts: group-committed appends, point loads by id, cursor pages by `seq`. */
export class ReceiptStore {
  readonly #writer: SqliteDatabase
  readonly #reader: SqliteDatabase
  readonly #queue: GroupCommit<ReceiptWrite, number>
  // seq the next appended row will most likely get; only steers id_bucket, so a wrong guess costs
  // index locality, never correctness (lookups probe every bucket up to max(id_bucket)).
  #latestSeq: number
  #closing: Promise<void> | undefined

  constructor(
    writer: SqliteDatabase,
    reader: SqliteDatabase,
    latestSeq: number,
    settings: ReceiptStoreSettings,
  ) {
    this.#writer = writer
    this.#reader = reader
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
  }

  /** Resolves when every receipt appended so far is committed (or failed). */
  flush(): Promise<void> {
    return this.#queue.flush()
  }

  /** Flushes, then closes both connections; later appends reject with gate_receipt_persistence_failed. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#queue.close()
      if (this.#reader !== this.#writer) await this.#reader.close()
      await this.#writer.close()
    })()
    return this.#closing
  }

  async #commit(writes: readonly ReceiptWrite[]): Promise<number[]> {
    let lastSeq = this.#latestSeq
    try {
      const results = await this.#writer.transaction(async tx => {
        const seqs: number[] = []
        let i = 0
        while (i < writes.length) {
          const write = writes[i]!
          if (write.type === 'core') {
            const { changes } = await tx.run('UPDATE receipts SET core_json = ? WHERE seq = ?', [write.coreJson, write.seq])
            seqs.push(changes)
            i++
            continue
          }
          const rows: StoredReceiptInput[] = []
          while (i < writes.length && rows.length < INSERT_CHUNK_ROWS) {
            const next = writes[i]!
            if (next.type !== 'append') break
            rows.push(next.row)
            i++
          }
          const params: SqlValue[] = []
          for (let k = 0; k < rows.length; k++) pushRowParams(params, rows[k]!, Math.floor((lastSeq + 1 + k) / ID_BUCKET_ROWS))
          const { lastInsertRowid } = await tx.run(insertSql(rows.length), params)
          // One INSERT appends its rows with consecutive rowids (max(rowid) + 1 each), in VALUES order.
          for (let k = rows.length - 1; k >= 0; k--) seqs.push(lastInsertRowid - k)
          lastSeq = lastInsertRowid
        }
        return seqs
      })
      this.#latestSeq = lastSeq
      return results
    } catch (err) {
      // The rolled-back rows never got their seqs; re-read where the table really ends.
      const latest = await this.#writer.get<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM receipts').catch(() => undefined)
      if (latest !== undefined) this.#latestSeq = latest.seq
      throw err
    }
  }
}

const insertSqlCache = new Map<number, string>()

function insertSql(rowCount: number): string {
  let sql = insertSqlCache.get(rowCount)
  if (sql === undefined) {
    const placeholders = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`
    sql = `INSERT INTO receipts (${INSERT_COLUMNS.join(', ')}) VALUES ${Array.from({ length: rowCount }, () => placeholders).join(', ')}`
    insertSqlCache.set(rowCount, sql)
  }
  return sql
}

function pushRowParams(params: SqlValue[], row: StoredReceiptInput, bucket: number): void {
  params.push(
    row.receiptId,
    bucket,
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
  )
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
