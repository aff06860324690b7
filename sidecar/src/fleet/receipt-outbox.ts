// Ships this process's receipts (HttpReceipts, and tool calls' core-only receipts) to trust-control
// (POST /v1/receipts/ingest). The hot path is unchanged: each receipt is committed to the local receipt
// store before its answer, as without a fleet. The outbox is that committed log past a cursor: a table in
// the local receipt store (`receipt_outbox`, one row per trust-control URL) records the last seq
// trust-control acknowledged. Shipping reads the receipts after it in batches, posts them, and advances
// the cursor only after the acknowledgement, so every receipt is delivered at least once, also across
// kill -9 and restarts; ingest is idempotent by receipt id, so a batch sent twice is stored once. A new
// --control-url starts from seq 0 (the whole local log).
import type { CommittedReceipts } from '@gate/trust'
import type { ReceiptQuery, ReceiptWriter } from '../stores/index.js'
import { openDatabase, type SqliteDatabase } from '../stores/sqlite-driver.js'
import type { ControlConnection } from './control-connection.js'
import type { KeyEnrolment } from './key-enrolment.js'

/** Receipts per ingest request (~2.7 KB each: well under the route's 8 MiB and 1,000-receipt limits). */
const OUTBOX_BATCH = 250
const INGEST_TIMEOUT_MS = 15_000
/** With nothing committed since, the log is looked at again this often (a commit wakes it sooner). */
const IDLE_LOOK_MS = 1000
const MAX_BACKOFF_MS = 5000

/** Where the acknowledged cursor is kept. */
export interface OutboxCursor {
  read(target: string): Promise<number>
  write(target: string, seq: number): Promise<void>
  close(): Promise<void>
}

const CURSOR_SCHEMA = `CREATE TABLE IF NOT EXISTS receipt_outbox (
  target TEXT PRIMARY KEY,
  shipped_seq INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID`

/**
 * The cursor table in the receipt store's file at `path` (created on first use, not part of the store's
 * required schema, so its revision stays), or in memory for in-memory receipts (undefined path).
 */
export async function openOutboxCursor(path: string | undefined): Promise<OutboxCursor> {
  if (path === undefined) {
    const seqs = new Map<string, number>()
    return { read: async t => seqs.get(t) ?? 0, write: async (t, s) => void seqs.set(t, s), close: async () => undefined }
  }
  const db: SqliteDatabase = await openDatabase(path, {}, { store: 'receipt outbox' })
  try {
    await db.exec(CURSOR_SCHEMA)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
  return {
    read: async target => (await db.get<{ seq: number }>('SELECT shipped_seq AS seq FROM receipt_outbox WHERE target = ?', [target]))?.seq ?? 0,
    write: async (target, seq) => {
      await db.run(
        'INSERT INTO receipt_outbox (target, shipped_seq, updated_at) VALUES (?, ?, ?) ON CONFLICT (target) DO UPDATE SET shipped_seq = excluded.shipped_seq, updated_at = excluded.updated_at',
        [target, seq, Math.floor(Date.now() / 1000)],
      )
    },
    close: () => db.close(),
  }
}

export interface ReceiptOutboxOptions {
  receipts: Pick<ReceiptQuery, 'ingestBatchAfter' | 'latestSeq'>
  writer: Pick<ReceiptWriter, 'onCommitted'>
  cursor: OutboxCursor
  /** The cursor's key: the trust-control URL. */
  target: string
  /** Shipping waits for the signing key's enrolment (ingest refuses receipts of keys never enrolled). */
  enrolment: Pick<KeyEnrolment, 'whenEnrolled' | 'enrolled'>
  log: (line: string) => void
  batchSize?: number
}

/** What /gate/health reports. */
export interface OutboxStatus {
  /** Committed receipts trust-control has not acknowledged yet. */
  lag: number
  shippedSeq: number
  latestSeq: number
  /** Receipts acknowledged by trust-control since start. */
  shipped: number
  lastError: string | null
}

export class ReceiptOutbox {
  readonly #connection: ControlConnection
  readonly #options: ReceiptOutboxOptions
  readonly #batch: number
  #shippedSeq = 0
  #latestSeq = 0
  #shipped = 0
  #lastError: string | null = null
  #stopped = false
  #wake: (() => void) | undefined
  #loop: Promise<void> | undefined
  #unsubscribe: (() => void) | undefined
  // a commit arrived since the last read of the log
  #committed = false
  // set by stop(): ship what is there, then end
  #draining = false
  #drainStarted: () => void = () => undefined
  readonly #drain = new Promise<void>(resolve => (this.#drainStarted = resolve))

  constructor(connection: ControlConnection, options: ReceiptOutboxOptions) {
    this.#connection = connection
    this.#options = options
    this.#batch = options.batchSize ?? OUTBOX_BATCH
  }

  async start(): Promise<void> {
    this.#shippedSeq = await this.#options.cursor.read(this.#options.target)
    this.#latestSeq = Math.max(this.#shippedSeq, await this.#options.receipts.latestSeq())
    this.#unsubscribe = this.#options.writer.onCommitted((batch: CommittedReceipts) => {
      if (batch.lastSeq > this.#latestSeq) this.#latestSeq = batch.lastSeq
      this.#committed = true
      this.#wake?.()
    })
    this.#loop = this.#run()
  }

  status(): OutboxStatus {
    return { lag: Math.max(0, this.#latestSeq - this.#shippedSeq), shippedSeq: this.#shippedSeq, latestSeq: this.#latestSeq, shipped: this.#shipped, lastError: this.#lastError }
  }

  /** Ships what it can within `drainMs` (a graceful stop), then stops; the rest waits in the outbox. */
  async stop(drainMs: number): Promise<void> {
    this.#unsubscribe?.()
    const deadline = setTimeout(() => {
      this.#stopped = true
      this.#wake?.()
    }, drainMs)
    this.#draining = true
    this.#drainStarted()
    this.#wake?.()
    await this.#loop
    clearTimeout(deadline)
    this.#stopped = true
    await this.#options.cursor.close()
  }

  async #run(): Promise<void> {
    // a stop before the enrolment ends the wait: nothing is shipped unenrolled (ingest would refuse it)
    await Promise.race([this.#options.enrolment.whenEnrolled(), this.#drain])
    if (!this.#options.enrolment.enrolled) return
    let backoffMs = 200
    while (!this.#stopped) {
      let shippedAny: boolean
      try {
        shippedAny = await this.#shipBatch()
        backoffMs = 200
      } catch (err) {
        const message = (err as Error).message
        if (message !== this.#lastError) this.#options.log(`fleet: receipt outbox: ${message}; ${this.status().lag} receipt(s) wait, retrying`)
        this.#lastError = message
        if (this.#draining) return
        await this.#pause(backoffMs)
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2)
        continue
      }
      if (!shippedAny) {
        if (this.#draining) return
        if (!this.#committed) await this.#pause(IDLE_LOOK_MS)
      }
    }
  }

  // true when a batch was shipped (look again at once)
  async #shipBatch(): Promise<boolean> {
    this.#committed = false
    // each receipt's stored bytes are sent as they are (never re-serialized, so the signature verifies
    // over exactly what was signed), with the row columns the receipt does not carry
    const batch = await this.#options.receipts.ingestBatchAfter(this.#shippedSeq, this.#batch)
    if (batch === undefined) return false
    const last = batch.lastSeq
    if (last > this.#latestSeq) this.#latestSeq = last
    // the body (gate.fleet.ingest_request.v1) is built from the stored bytes by the receipt store's SQL
    const answer = await this.#connection.expectMessage('gate.fleet.ingest_response.v1', this.#connection.post('/v1/receipts/ingest', batch.body, INGEST_TIMEOUT_MS))
    if (answer.results.length !== batch.count) throw new Error('POST /v1/receipts/ingest answered without one result per receipt')
    // acknowledged: only now does the cursor move (a crash before this line re-sends the batch)
    await this.#options.cursor.write(this.#options.target, last)
    this.#shippedSeq = last
    this.#shipped += batch.count
    if (this.#lastError !== null) this.#options.log(`fleet: receipt outbox shipping again (through seq ${last})`)
    this.#lastError = null
    return true
  }

  #pause(ms: number): Promise<void> {
    return new Promise(resolve => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.#wake = () => {
        this.#wake = undefined
        done()
      }
    })
  }
}
