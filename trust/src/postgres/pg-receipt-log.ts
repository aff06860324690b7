// The receipt log on PostgreSQL: the same contract as the SQLite ReceiptLog (group commit, resolve after
// COMMIT, followers in commit order) for any number of trust-control nodes on one database.
//
// Seqs are consecutive and become visible in commit order, as the query engine's snapshot bound and the
// transparency log's leaves require (a reader that sees seq M has seen every seq below it). A sequence
// would not give that: concurrent transactions commit out of order and a rolled-back one leaves a gap.
// So every batch takes a transaction-level advisory lock, reads the table's end in a statement started
// after the lock was granted (read committed: a new snapshot per statement, which sees the previous
// holder's commit), and numbers its rows from there; the lock is released only once it has committed.
// Appends of every node are thereby serial, one batch per transaction. A receipt id already stored is
// not stored again (ingest is idempotent): its append answers the stored seq with `stored: false`.
//
// Since migration 4 `receipts` is partitioned by week: the receipt id and the seq are kept unique by
// `receipt_ids`, and the per-hour rollups analytics reads are brought up to date, all in the one
// statement that inserts the batch (a writable CTE over the batch). A batch of `copyFromRows` new rows
// or more is first COPYed into a temporary staging table and inserted from there; a smaller one arrives
// as one array parameter per column (unnest), which saves the COPY's extra round trips where they cost
// more than the parsing they save (docs/postgres.md, "Receipts at scale", has the measurements).
import { InvalidConfigError } from '@gate/sdk'
import { ReceiptPersistenceError, StoreInputError } from '../errors.js'
import { GroupCommit, type GroupCommitStats } from '../stores/group-commit.js'
import type { TrustReceiptLog } from '../store-ports.js'
import { rowValues, type CommittedReceipts, type ReceiptRow } from '../stores/receipt-row.js'
import { isUnavailable, pgErrorText, toStoreError, type PgDatabase, type PgExecutor, type PgValue } from './pg-database.js'
import { copyLine } from './pg-copy.js'
import { RECEIPT_APPEND_LOCK } from './pg-locks.js'
import { ReceiptPartitions } from './pg-receipt-partitions.js'
import { ROLLUPS, rollupUpsert } from './migrations/0004-partitioned-receipts.js'

/** Options of `PgReceiptLog`. */
export interface PgReceiptLogOptions {
  /** Largest group-commit batch, default 512. */
  maxBatchSize?: number
  /** Batches of at least this many new rows are COPYed (default COPY_FROM_ROWS); Infinity never COPYs. */
  copyFromRows?: number
  onError?: (err: Error) => void
  onRecover?: () => void
  /** Where partition maintenance reports what it could not do. */
  log?: (line: string) => void
}

/** An append's result: the row's seq, and false when the receipt id was already stored (that row's seq). */
export interface PgAppendResult {
  seq: number
  stored: boolean
}

type LogWrite = { type: 'append'; values: unknown[]; receiptId: string } | { type: 'core'; seq: number; coreJson: string }
type LogResult = PgAppendResult | boolean

// rowValues() order: receiptId, idPrefix (SQLite only), timestamp, requestId, method, routePattern,
// toolServer, toolName, outcome, capabilityId, tenant, subjectKey, costUnits, costCurrency,
// attemptedCostUnits, kind, decisionReceiptId, httpJson, coreJson.
const COLUMNS: readonly [string, string][] = [
  ['receipt_id', 'text'],
  ['timestamp', 'bigint'],
  ['request_id', 'text'],
  ['method', 'text'],
  ['route_pattern', 'text'],
  ['tool_server', 'text'],
  ['tool_name', 'text'],
  ['outcome', 'text'],
  ['capability_id', 'text'],
  ['tenant', 'text'],
  ['subject_key', 'text'],
  ['cost_units', 'bigint'],
  ['cost_currency', 'text'],
  ['attempted_cost_units', 'bigint'],
  ['kind', 'text'],
  ['decision_receipt_id', 'text'],
  ['http_json', 'text'],
  ['core_json', 'text'],
]
const NAMES = COLUMNS.map(([c]) => c).join(', ')
/** Default of `PgReceiptLogOptions.copyFromRows`. */
export const COPY_FROM_ROWS = 500
// One statement fills the id table, the rollups and the receipts from `source`, a table or a CTE.
const insertFrom = (source: string) => `ids AS (INSERT INTO receipt_ids (receipt_id, seq, timestamp) SELECT receipt_id, seq, timestamp FROM ${source}),
  ${ROLLUPS.map((r, i) => `r${i} AS (${rollupUpsert(r, source)})`).join(',\n  ')}
  INSERT INTO receipts (seq, ${NAMES}) SELECT seq, ${NAMES} FROM ${source}`
const BATCH = `SELECT * FROM unnest($1::bigint[], ${COLUMNS.map(([, type], i) => `$${i + 2}::${type}[]`).join(', ')}) AS b(seq, ${NAMES})`
const INSERT_SQL = `WITH batch AS MATERIALIZED (${BATCH}),
  ${insertFrom('batch')}`
// The staging table lives as long as the connection and is emptied by each COMMIT (or ROLLBACK).
const STAGE_SQL = `CREATE TEMPORARY TABLE IF NOT EXISTS pg_temp.receipt_batch (seq bigint NOT NULL, ${COLUMNS.map(([c, type]) => `${c} ${type}`).join(', ')}) ON COMMIT DELETE ROWS`
const COPY_SQL = `COPY pg_temp.receipt_batch (seq, ${NAMES}) FROM STDIN`
const INSERT_STAGED_SQL = `WITH ${insertFrom('pg_temp.receipt_batch')}`
// the timestamp names the partition; the seq finds the row in it
const CORE_SQL = `UPDATE receipts SET core_json = u.core FROM (SELECT u.seq, u.core, i.timestamp FROM unnest($1::bigint[], $2::text[]) AS u(seq, core) JOIN receipt_ids i ON i.seq = u.seq) AS u
  WHERE receipts.seq = u.seq AND receipts.timestamp = u.timestamp RETURNING receipts.seq`

/** Group-committed appends and core-form updates of the `receipts` table. */
export class PgReceiptLog implements TrustReceiptLog {
  readonly #db: PgDatabase
  readonly #queue: GroupCommit<LogWrite, LogResult>
  readonly #followers = new Set<(batch: CommittedReceipts) => void>()
  readonly #partitions: ReceiptPartitions
  readonly #copyFromRows: number

  constructor(db: PgDatabase, options: PgReceiptLogOptions = {}) {
    this.#db = db
    const copyFromRows = options.copyFromRows ?? COPY_FROM_ROWS
    if (!(copyFromRows === Number.POSITIVE_INFINITY || (Number.isSafeInteger(copyFromRows) && copyFromRows >= 1))) throw new InvalidConfigError('receipt log options.copyFromRows', 'a positive integer or Infinity', copyFromRows)
    this.#copyFromRows = copyFromRows
    this.#partitions = new ReceiptPartitions(db, { log: options.log })
    this.#queue = new GroupCommit<LogWrite, LogResult>({
      store: 'receipts',
      maxBatchSize: options.maxBatchSize,
      commitBatch: writes => this.#commit(writes),
      // a database that is down is a 503 (retry), not a broken store
      toError: (cause, batchSize) =>
        isUnavailable(cause)
          ? (toStoreError(cause, 'receipts', db.location) as ReceiptPersistenceError)
          : new ReceiptPersistenceError(`the commit of a batch of ${batchSize} failed (${pgErrorText(cause)})`, { cause, batchSize }),
      onError: options.onError,
      onRecover: options.onRecover,
    })
  }

  get path(): string {
    return this.#db.location
  }

  get driver(): 'pg' {
    return 'pg'
  }

  get isEphemeral(): boolean {
    return false
  }

  /** False after a failed commit until a later one succeeds. */
  get healthy(): boolean {
    return this.#queue.healthy
  }

  get lastError(): Error | undefined {
    return this.#queue.lastError
  }

  get stats(): GroupCommitStats {
    return this.#queue.stats
  }

  /** Appends one receipt; resolves once committed (or found already stored). */
  async append(row: ReceiptRow): Promise<PgAppendResult> {
    return (await this.#queue.enqueue(appendWrite(row))) as PgAppendResult
  }

  async appendMany(rows: readonly ReceiptRow[]): Promise<PgAppendResult[]> {
    return (await this.#queue.enqueueMany(rows.map(appendWrite))) as PgAppendResult[]
  }

  /** Records the core form of the row at `seq`; true when that row exists. */
  async setCoreJson(seq: number, coreJson: string): Promise<boolean> {
    if (!Number.isSafeInteger(seq) || seq < 1) throw new StoreInputError('seq', 'a positive integer', seq)
    if (typeof coreJson !== 'string' || coreJson === '') throw new StoreInputError('coreJson', 'a non-empty string', coreJson)
    return (await this.#queue.enqueue({ type: 'core', seq, coreJson })) as boolean
  }

  /** Calls `follower` after each commit that stored receipts (this process's commits only). */
  onCommitted(follower: (batch: CommittedReceipts) => void): () => void {
    this.#followers.add(follower)
    return () => this.#followers.delete(follower)
  }

  flush(): Promise<void> {
    return this.#queue.flush()
  }

  close(): Promise<void> {
    return this.#queue.close()
  }

  async #commit(writes: readonly LogWrite[]): Promise<LogResult[]> {
    const results = new Array<LogResult>(writes.length)
    const appends = writes.flatMap((w, i) => (w.type === 'append' ? [{ w, i }] : []))
    const cores = writes.flatMap((w, i) => (w.type === 'core' ? [{ w, i }] : []))
    let committed: CommittedReceipts | undefined
    // values[2] is the timestamp (rowValues order)
    if (appends.length > 0) await this.#partitions.ensure(appends.map(a => (a.w as Extract<LogWrite, { type: 'append' }>).values[2] as number))
    await this.#db.transaction(async tx => {
      if (appends.length > 0) committed = await appendBatch(tx, this.#copyFromRows, appends.map(a => a.w as Extract<LogWrite, { type: 'append' }>), (k, r) => (results[appends[k]!.i] = r))
      if (cores.length > 0) {
        const updated = await tx.all<{ seq: number }>(CORE_SQL, [cores.map(c => (c.w as Extract<LogWrite, { type: 'core' }>).seq), cores.map(c => (c.w as Extract<LogWrite, { type: 'core' }>).coreJson)])
        const hit = new Set(updated.map(r => r.seq))
        for (const { w, i } of cores) results[i] = hit.has((w as Extract<LogWrite, { type: 'core' }>).seq)
      }
    })
    if (committed !== undefined) this.#tellFollowers(committed)
    return results
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

// Inside the batch's transaction: lock, read the end and the ids already stored, insert the new rows.
async function appendBatch(
  tx: PgExecutor,
  copyFromRows: number,
  writes: readonly Extract<LogWrite, { type: 'append' }>[],
  settle: (k: number, result: PgAppendResult) => void,
): Promise<CommittedReceipts | undefined> {
  await tx.get('SELECT pg_advisory_xact_lock($1)', [RECEIPT_APPEND_LOCK.toString()])
  const ids = writes.map(w => w.receiptId)
  const state = await tx.get<{ end: number; existing: [string, number][] | null }>(
    `SELECT (SELECT coalesce(max(seq), 0) FROM receipt_ids) AS end,
      (SELECT json_agg(json_build_array(receipt_id, seq)) FROM receipt_ids WHERE receipt_id = ANY($1::text[])) AS existing`,
    [ids],
  )
  const known = new Map<string, number>(state?.existing ?? [])
  let seq = state?.end ?? 0
  const firstSeq = seq + 1
  const columns: PgValue[][] = [[], ...COLUMNS.map(() => [])]
  const stored: string[] = []
  writes.forEach((write, k) => {
    const existing = known.get(write.receiptId)
    if (existing !== undefined) return settle(k, { seq: existing, stored: false })
    seq++
    known.set(write.receiptId, seq)
    stored.push(write.receiptId)
    columns[0]!.push(seq)
    // skip idPrefix (index 1 of rowValues), which only SQLite's bucketed id index uses
    const values = [write.values[0], ...write.values.slice(2)]
    values.forEach((value, c) => columns[c + 1]!.push(value as PgValue))
    settle(k, { seq, stored: true })
  })
  if (stored.length === 0) return undefined
  if (stored.length >= copyFromRows) {
    await tx.run(STAGE_SQL)
    await tx.copyFrom(COPY_SQL, stagedRows(columns))
    await tx.run(INSERT_STAGED_SQL)
  } else {
    await tx.run(INSERT_SQL, columns as PgValue[])
  }
  return { firstSeq, lastSeq: seq, receiptIds: stored }
}

// The batch's columns as COPY text, one line per row.
function stagedRows(columns: readonly PgValue[][]): string {
  const lines: string[] = []
  for (let r = 0; r < columns[0]!.length; r++) lines.push(copyLine(columns.map(column => column[r] as string | number | null)))
  return lines.join('')
}

// Checked before queueing: one bad row fails alone, not the batch it would have joined. A row may carry
// only its core form (http_json null) when it has one.
function appendWrite(row: ReceiptRow): LogWrite {
  const values = rowValues(row.httpJson === null && typeof row.coreJson === 'string' ? { ...row, httpJson: row.coreJson } : row)
  if (row.httpJson === null) values[values.length - 2] = null
  return { type: 'append', values, receiptId: row.receiptId }
}
