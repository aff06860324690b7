// The receipt log (receipt store revision 4): the table's DDL and the one way rows get into it. Every
// signed receipt is kept byte for byte as it was serialized, in `seq` order (the row is @gate/trust's
// ReceiptRow, the same on PostgreSQL): an HttpReceipt in `http_json` (its core form, made on read, in
// `core_json`), or a receipt that only ever had a core form (a tool call's `gate.receipt.v1`) in
// `core_json` with `http_json` null. Appends go through
// group commit, so a write resolves only once its row is committed (commit before reply: a receipt id a
// client has seen survives `kill -9`), and followers (`onCommitted`) learn of each committed batch in
// commit order.
//
// Point loads by receipt id: an index on the random 64-hex id costs ingest dearly once it outgrows the
// batch, since every commit dirties about one index page per receipt. Measured at 200k receipts, group
// commit of 50 (sqlite3): no id index 4.2 KB written per receipt, UNIQUE(receipt_id) 18.4 KB and 1.5x
// slower (worsening as it grows), an index on a 52-bit integer prefix 13.4 KB. Instead each row carries
// `id_prefix` (the id's first 52 bits) and `id_bucket` (seq / 4096), indexed together: a commit touches
// only the current bucket's ~15 index pages (6.0 KB per receipt, throughput within noise of no index),
// and a lookup probes the buckets newest first (receipt-query.ts). bench/src/stores/receipt-ingest.ts.
import { GroupCommit, rowValues, type CommittedReceipts, type GroupCommitStats, type ReceiptRow, type TrustReceiptLog } from '@gate/trust'
import { StoreInputError } from '../errors.js'
import type { StoreSchema } from './revision-stamp.js'
import type { SqliteDatabase, SqlValue } from './sqlite-driver.js'


/**
 * Rows per `id_bucket` (~15 index pages): a commit of 50 receipts dirties at most those pages instead of
 * one page per receipt. Smaller is cheaper to write and slower to look up (one probe per bucket).
 */
export const ID_BUCKET_ROWS = 4096

// The table as of revision 4: `http_json` became nullable (a tool call's receipt has no HTTP form) and
// every row keeps at least one signed form.
const RECEIPTS_TABLE_COLUMNS = `(
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
      http_json TEXT,
      core_json TEXT,
      CHECK (http_json IS NOT NULL OR core_json IS NOT NULL)
    )`

const RECEIPTS_BY_ID_INDEX = 'CREATE INDEX receipts_by_id ON receipts (id_bucket, id_prefix)'

/** Schema revision 4. */
export const RECEIPT_SCHEMA: StoreSchema = Object.freeze({
  store: 'receipts',
  create: [`CREATE TABLE receipts ${RECEIPTS_TABLE_COLUMNS}`, RECEIPTS_BY_ID_INDEX],
  migrations: [
    {
      // 3 → 4: SQLite cannot drop a NOT NULL in place, so the table is rebuilt (SQLite's documented
      // procedure) inside the opening transaction; the query indexes come back when next asked for.
      from: 3,
      statements: [
        `CREATE TABLE receipts_v4 ${RECEIPTS_TABLE_COLUMNS}`,
        'INSERT INTO receipts_v4 SELECT * FROM receipts',
        'DROP TABLE receipts',
        'ALTER TABLE receipts_v4 RENAME TO receipts',
        RECEIPTS_BY_ID_INDEX,
      ],
    },
  ],
})

/** Rows whose core form is not stored yet (partial, so it holds only those rows). */
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
 * The indexes trust-control creates (`ReceiptStore.createTrustIndexes`), chosen by measured ingest cost
 * (bench/src/trust/query.ts, docs/trust-control.md):
 * - `receipts_by_time_covering`: every column a filter or an aggregate reads, led by the timestamp.
 *   Timestamps grow with seq, so inserts append at its end (cheap), and counts and analytics over a
 *   time window, or over everything, read this index alone, never the large table rows.
 * - `receipts_by_*_bucket` on (id_bucket, column) for the high-cardinality filters that need seeks
 *   (capability, agent subject, tenant): like `receipts_by_id`, a commit dirties only the current
 *   bucket's pages instead of one page per distinct value; queries probe bucket by bucket.
 * - `receipts_by_cost` (partial: only receipts with financial metadata) and `receipts_core_pending`
 *   (partial: only rows whose core form is missing, which a key rotation converts first).
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

/** Options of `ReceiptLog`. */
export interface ReceiptLogOptions {
  /** Largest group-commit batch. */
  maxBatchSize: number
  /** Called once per failed commit (the log is then unhealthy until a commit succeeds). */
  onError?: (err: Error) => void
  /** Called when a commit succeeds after a failure. */
  onRecover?: () => void
}

type LogWrite = { type: 'append'; row: unknown[]; receiptId: string } | { type: 'core'; seq: number; coreJson: string }

/** Group-committed appends (and core-form updates) on the store's write connection. */
export class ReceiptLog implements TrustReceiptLog {
  readonly #db: SqliteDatabase
  readonly #queue: GroupCommit<LogWrite, number>
  readonly #followers = new Set<(batch: CommittedReceipts) => void>()

  constructor(db: SqliteDatabase, options: ReceiptLogOptions) {
    this.#db = db
    this.#queue = new GroupCommit<LogWrite, number>({
      store: 'receipts',
      maxBatchSize: options.maxBatchSize,
      commitBatch: writes => this.#commit(writes),
      onError: options.onError,
      onRecover: options.onRecover,
    })
  }

  get path(): string {
    return this.#db.path
  }

  /** The SQLite driver in use. */
  get driver(): SqliteDatabase['driver'] {
    return this.#db.driver
  }

  /** True for an in-memory store (the sidecar then reports `receipt_backend: ephemeral`). */
  get isEphemeral(): boolean {
    return this.#db.isEphemeral
  }

  /** False after a failed commit until a later one succeeds: /gate/health answers 503, evaluate fails closed. */
  get healthy(): boolean {
    return this.#queue.healthy
  }

  /** The error of the last failed commit, while unhealthy. */
  get lastError(): Error | undefined {
    return this.#queue.lastError
  }

  /** Group-commit counters. */
  get stats(): GroupCommitStats {
    return this.#queue.stats
  }

  /** Appends one receipt; resolves with its `seq` once committed, rejects with gate_receipt_persistence_failed. */
  async append(row: ReceiptRow): Promise<{ seq: number }> {
    const seq = await this.#queue.enqueue(appendWrite(row))
    return { seq }
  }

  /** Appends several receipts (sharing a transaction when they fit one batch); resolves once all committed. */
  async appendMany(rows: readonly ReceiptRow[]): Promise<{ seq: number }[]> {
    const seqs = await this.#queue.enqueueMany(rows.map(appendWrite))
    return seqs.map(seq => ({ seq }))
  }

  /** Records the core receipt form of the row at `seq`; resolves true when that row exists. */
  async setCoreJson(seq: number, coreJson: string): Promise<boolean> {
    if (!Number.isSafeInteger(seq) || seq < 1) throw new StoreInputError('seq', 'a positive integer', seq)
    if (typeof coreJson !== 'string' || coreJson === '') throw new StoreInputError('coreJson', 'a non-empty string', coreJson)
    return (await this.#queue.enqueue({ type: 'core', seq, coreJson })) === 1
  }

  /**
   * Calls `follower` after each commit that appended receipts, in commit order, with the batch's ids and
   * seq range; returns an unsubscribe. Only this process's commits are reported: rows another process
   * appends to the same file take the seqs in between (read them from the table by seq). A follower's
   * throw is its own; the commit stands.
   */
  onCommitted(follower: (batch: CommittedReceipts) => void): () => void {
    this.#followers.add(follower)
    return () => this.#followers.delete(follower)
  }

  /**
   * Sets this connection's automatic WAL checkpoint threshold (pages; 0 turns it off): the threaded
   * receipt writer hands checkpoints to its thread while it commits here too.
   */
  async setWalAutocheckpoint(pages: number): Promise<void> {
    if (!Number.isSafeInteger(pages) || pages < 0) throw new StoreInputError('pages', 'a non-negative integer', pages)
    if (!this.#db.isEphemeral) await this.#db.exec(`PRAGMA wal_autocheckpoint = ${pages}`)
  }

  /** Runs index DDL on the write connection (idempotent statements). */
  async createIndexes(statements: readonly string[]): Promise<void> {
    for (const sql of statements) await this.#db.exec(sql)
  }

  /** Resolves when every write queued so far is committed (or failed). */
  flush(): Promise<void> {
    return this.#queue.flush()
  }

  /** Flushes and stops accepting writes (later ones reject with gate_receipt_persistence_failed); the connection stays open. */
  close(): Promise<void> {
    return this.#queue.close()
  }

  // Appends are one statement (node:sqlite: one transaction), core-form updates another, issued back to
  // back: a batch costs one round trip to SQLite's thread on sqlite3 instead of one per statement, which
  // under load bounded the commit latency every evaluate answer waits for. seq and id_bucket come from
  // the table's end inside the statement, so another process appending to the file cannot skew them.
  async #commit(writes: readonly LogWrite[]): Promise<number[]> {
    const results = new Array<number>(writes.length)
    const appendAt: number[] = []
    const rows: unknown[][] = []
    const receiptIds: string[] = []
    const coreAt: number[] = []
    const cores: [number, string][] = []
    writes.forEach((write, i) => {
      if (write.type === 'append') {
        appendAt.push(i)
        rows.push(write.row)
        receiptIds.push(write.receiptId)
      } else {
        coreAt.push(i)
        cores.push([write.seq, write.coreJson])
      }
    })
    const pending: Promise<void>[] = []
    if (rows.length > 0) {
      pending.push(
        appendRows(this.#db, rows).then(lastSeq => {
          // seq = end + position + 1: consecutive, in array order
          const firstSeq = lastSeq - rows.length + 1
          for (let k = 0; k < appendAt.length; k++) results[appendAt[k]!] = firstSeq + k
          this.#tellFollowers({ firstSeq, lastSeq, receiptIds })
        }),
      )
    }
    if (cores.length > 0) pending.push(this.#updateCores(cores, coreAt, results))
    await Promise.all(pending)
    return results
  }

  async #updateCores(cores: [number, string][], at: number[], results: number[]): Promise<void> {
    const { changes } = await this.#db.run(CORE_SQL, [JSON.stringify(cores)])
    if (changes === cores.length) {
      for (const i of at) results[i] = 1
      return
    }
    // some rows were missing: say which
    for (let k = 0; k < at.length; k++) {
      const row = await this.#db.get<{ n: number }>('SELECT count(*) AS n FROM receipts WHERE seq = ?', [cores[k]![0]])
      results[at[k]!] = row?.n ?? 0
    }
  }

  #tellFollowers(batch: CommittedReceipts): void {
    for (const follower of this.#followers) {
      try {
        follower(batch)
      } catch {
        // a follower's failure is its own; the commit stands
      }
    }
  }
}

// ---- the SQL: one path per driver ----

/** The columns of an append, in order: seq and id_bucket, then one value per column of a row (rowValues). */
const APPEND_COLUMNS =
  'seq, id_bucket, receipt_id, id_prefix, timestamp, request_id, method, route_pattern, tool_server, tool_name, outcome, capability_id, tenant, subject_key, cost_units, cost_currency, attempted_cost_units, kind, decision_receipt_id, http_json, core_json'

const ROW_WIDTH = APPEND_COLUMNS.split(',').length - 2

// sqlite3: the rows travel as one JSON parameter and SQLite numbers them from the table's end, in one
// statement: a batch is one round trip to the addon's thread, and on that driver binding each value
// separately cost the event loop more than the JSON does (bench receipt-ingest).
const APPEND_JSON_SQL = `INSERT INTO receipts (${APPEND_COLUMNS})
  SELECT m.s + j.key + 1, (m.s + j.key + 1) / ${ID_BUCKET_ROWS},
    ${Array.from({ length: ROW_WIDTH }, (_, i) => `j.value ->> ${i}`).join(',\n    ')}
  FROM (SELECT coalesce(max(seq), 0) AS s FROM receipts) AS m, json_each(?) AS j
  ORDER BY j.key`

const CORE_SQL = 'UPDATE receipts SET core_json = j.value ->> 1 FROM json_each(?) AS j WHERE receipts.seq = j.value ->> 0'

// node:sqlite: statements run on the event loop, where unpacking JSON costs ~30 µs per row and bound
// values ~12, so the rows go as multi-row INSERT … VALUES in one IMMEDIATE transaction (the write lock
// is held from the read of the table's end to the commit). Chunks of 64, 16, 4 and 1 rows keep the
// number of distinct statements (and prepared plans) at four.
const VALUES_CHUNKS = [64, 16, 4, 1] as const
const APPEND_VALUES_SQL = new Map<number, string>()

function appendValuesSql(rows: number): string {
  let sql = APPEND_VALUES_SQL.get(rows)
  if (sql === undefined) {
    const one = `(${Array.from({ length: ROW_WIDTH + 2 }, () => '?').join(', ')})`
    sql = `INSERT INTO receipts (${APPEND_COLUMNS}) VALUES ${Array.from({ length: rows }, () => one).join(', ')}`
    APPEND_VALUES_SQL.set(rows, sql)
  }
  return sql
}

/**
 * Appends `rows` (each from `rowValues`) in one transaction on `db`; resolves with the last seq once
 * committed (the rows took the seqs before it, in order). The log's group commit and the writer thread
 * (receipt-writer-thread.ts) both append through here.
 */
export function appendRows(db: SqliteDatabase, rows: readonly unknown[][]): Promise<number> {
  if (db.driver === 'sqlite3') return db.run(APPEND_JSON_SQL, [JSON.stringify(rows)]).then(r => r.lastInsertRowid)
  return db.transaction(async tx => {
    let seq = (await tx.get<{ s: number }>('SELECT coalesce(max(seq), 0) AS s FROM receipts'))?.s ?? 0
    for (let i = 0; i < rows.length; ) {
      const size = VALUES_CHUNKS.find(n => n <= rows.length - i)!
      const params: unknown[] = []
      for (const row of rows.slice(i, i + size)) {
        seq++
        params.push(seq, Math.floor(seq / ID_BUCKET_ROWS), ...row)
      }
      await tx.run(appendValuesSql(size), params as SqlValue[])
      i += size
    }
    return seq
  })
}

// Checked before queueing: one bad row must fail alone, not the batch it would have joined.
function appendWrite(row: ReceiptRow): LogWrite {
  return { type: 'append', row: rowValues(row), receiptId: row.receiptId }
}
