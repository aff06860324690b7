// The core-receipt backfill. Trust-control serves stored core receipts (spec 03), but signing a second
// time on the evaluate hot path would halve its throughput, so receipts are committed in their HTTP form
// only and this background task adds the core form afterwards: it reads rows whose `core_json` is null
// (through a partial index that holds only those rows), converts them with the authority signer and
// stores the result with `setCoreJson` (through the receipt store's group commit, so the updates share
// transactions with appends). Ed25519 signatures are deterministic, so the stored bytes are the ones the
// read path would compute for the same row at any time.
//
// Never on the request path: it wakes after receipts commit, waits `gatherMs` so one pass handles many
// commits, converts a few rows per event-loop turn and yields (setImmediate) between chunks. In the
// sidecar the conversion (a re-signature per row) runs on the signing thread (signing/worker-signer.ts),
// so a chunk costs the event loop only its store I/O, and chunks are small so receipt signatures queued
// behind one wait about a millisecond at most. While the service is busy (`busy`: in the sidecar, a
// request in flight or a loop more than 10% busy) it does not convert at all (it checks again every
// busyDelayMs), so under load it takes no CPU from evaluations and catches up when the service is idle.
// Queries meeting an unconverted row convert it on the spot. It is flushed (run to the end without
// sleeping) before an authority rotation, since rows signed by the old key can no longer be converted
// once the old seed is gone, and on shutdown; a flush or stop cuts every wait short.
//
// Rows signed by a key this process does not hold (another authority's, or a retired one) are skipped:
// they stay in their HTTP form and the read path serves them as stored (docs/trust-control.md).
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Signer } from '@gate/sdk'
import { toCoreJson, type CoreFormResult } from '@gate/trust'
import type { ReceiptStore } from '../stores/index.js'

/** The receipt store surface the backfill uses. */
export type BackfillReceipts = Pick<ReceiptStore, 'listCorePending' | 'setCoreJson' | 'flush' | 'latestSeq' | 'watchAppends'>

/** Options of `CoreBackfill`. */
export interface CoreBackfillOptions {
  receipts: BackfillReceipts
  /** The current authority signer (read at every chunk: it changes on rotation). */
  signer: () => Signer
  /**
   * Converts a chunk elsewhere (the sidecar's signing thread, whose key never rotates); default: on
   * this thread with `signer()`. A rejected chunk is converted on this thread instead.
   */
  convert?: (httpJsons: readonly string[]) => Promise<CoreFormResult[]>
  /** Rows read per batch, default 256. */
  batchSize?: number
  /** Rows converted per event-loop turn, default 8 (about 1 ms of signing). */
  chunkSize?: number
  /** True while the service is serving requests; the backfill then waits. Default: never busy. */
  busy?: () => boolean
  /** How often to look again while busy, default 25 ms. */
  busyDelayMs?: number
  /** Also look for new rows this often (receipts another process appended), 0 (default) for commit notifications only. */
  pollIntervalMs?: number
  /**
   * After a commit notification, wait this long before looking (default 250 ms; 0 looks at once), so one
   * pass handles the receipts of many commits: each pass costs a read, a signing-thread round trip and a
   * commit of its own, which at a steady trickle of requests cost more than the conversions.
   */
  gatherMs?: number
  log?: (line: string) => void
}

/** Defaults of `CoreBackfillOptions`. */
export const CORE_BACKFILL_DEFAULTS = Object.freeze({ batchSize: 256, chunkSize: 8, busyDelayMs: 25, pollIntervalMs: 0, gatherMs: 250 })

/** Counters (tests, logs, /health). */
export interface CoreBackfillStats {
  converted: number
  /** Rows signed by a key this process does not hold. */
  skippedForeign: number
  /** Rows whose HTTP form could not be read or mapped. */
  skippedInvalid: number
  failedWrites: number
  /** Reads of the backlog that found rows to convert. */
  passes: number
}

/** Background conversion of stored HttpReceipts to their core form. */
export class CoreBackfill {
  readonly #receipts: BackfillReceipts
  readonly #signer: () => Signer
  readonly #convertElsewhere: CoreBackfillOptions['convert']
  readonly #batchSize: number
  readonly #chunkSize: number
  readonly #busy: () => boolean
  readonly #busyDelayMs: number
  readonly #pollIntervalMs: number
  readonly #gatherMs: number
  readonly #log: (line: string) => void
  readonly stats: CoreBackfillStats = { converted: 0, skippedForeign: 0, skippedInvalid: 0, failedWrites: 0, passes: 0 }
  // Rows with seq <= #cursor were looked at; every row with seq <= #doneThrough is converted (or skipped) and committed.
  #cursor = 0
  #doneThrough = 0
  #loop: Promise<void> | undefined
  #stopped = false
  #pendingWake = false
  #wake: (() => void) | undefined
  #urgent = 0
  #waiters: { target: number; resolve: () => void }[] = []
  #unwatch: (() => void) | undefined

  constructor(options: CoreBackfillOptions) {
    this.#receipts = options.receipts
    this.#signer = options.signer
    this.#convertElsewhere = options.convert
    this.#batchSize = options.batchSize ?? CORE_BACKFILL_DEFAULTS.batchSize
    this.#chunkSize = options.chunkSize ?? CORE_BACKFILL_DEFAULTS.chunkSize
    this.#busy = options.busy ?? (() => false)
    this.#busyDelayMs = options.busyDelayMs ?? CORE_BACKFILL_DEFAULTS.busyDelayMs
    this.#pollIntervalMs = options.pollIntervalMs ?? CORE_BACKFILL_DEFAULTS.pollIntervalMs
    this.#gatherMs = options.gatherMs ?? CORE_BACKFILL_DEFAULTS.gatherMs
    this.#log = options.log ?? (() => undefined)
  }

  /** Starts the loop (idempotent); it wakes on every commit that appended receipts. */
  start(): void {
    if (this.#loop !== undefined || this.#stopped) return
    this.#unwatch = this.#receipts.watchAppends(() => this.notify())
    this.#loop = this.#run().catch(err => this.#log(`core backfill stopped: ${(err as Error).message}`))
  }

  /** New receipts were committed. */
  notify(): void {
    this.#pendingWake = true
    this.#wake?.()
  }

  /** Resolves once every receipt committed before the call has its core form stored (or was skipped). */
  async flush(): Promise<void> {
    await this.#receipts.flush()
    const target = await this.#receipts.latestSeq()
    if (target <= this.#doneThrough || this.#loop === undefined) {
      if (this.#loop === undefined && !this.#stopped) await this.#drainOnce(target)
      return
    }
    this.#urgent++
    try {
      await new Promise<void>(resolve => {
        this.#waiters.push({ target, resolve })
        this.notify()
      })
    } finally {
      this.#urgent--
    }
  }

  /** Flushes (at most `timeoutMs`), then stops the loop. */
  async stop(timeoutMs = 20_000): Promise<void> {
    if (this.#stopped) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.flush().catch(() => undefined), new Promise<void>(resolve => (timer = setTimeout(resolve, timeoutMs).unref()))])
    clearTimeout(timer)
    this.#stopped = true
    this.#unwatch?.()
    this.notify()
    await this.#loop
    for (const waiter of this.#waiters.splice(0)) waiter.resolve()
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      this.#pendingWake = false
      const latest = await this.#receipts.latestSeq()
      const rows = await this.#receipts.listCorePending(this.#cursor, this.#batchSize)
      if (rows.length === 0) {
        this.#cursor = Math.max(this.#cursor, latest)
        this.#markDone(latest)
        if (!this.#pendingWake && !this.#stopped) await this.#sleep(this.#pollIntervalMs, () => true)
        await this.#gather()
        continue
      }
      await this.#convert(rows)
      const last = rows[rows.length - 1]!.seq
      // Everything up to `last` is handled; when the batch ran out, so is everything up to `latest`.
      this.#markDone(rows.length < this.#batchSize ? Math.max(last, latest) : last)
      // caught up: let the next receipts gather instead of taking them one pass each
      if (rows.length < this.#batchSize) await this.#gather()
    }
  }

  // A flush or stop is waiting: no more gathering or yielding to requests.
  #interrupted(): boolean {
    return this.#urgent > 0 || this.#stopped
  }

  // Waits `gatherMs` unless interrupted (which also cuts the wait short).
  async #gather(): Promise<void> {
    if (this.#gatherMs > 0 && !this.#interrupted()) await this.#sleep(this.#gatherMs, () => this.#interrupted())
  }

  // Without a running loop (not started): one synchronous pass for flush().
  async #drainOnce(target: number): Promise<void> {
    while (this.#doneThrough < target) {
      const rows = await this.#receipts.listCorePending(this.#cursor, this.#batchSize)
      if (rows.length === 0) {
        this.#cursor = Math.max(this.#cursor, target)
        this.#doneThrough = Math.max(this.#doneThrough, target)
        return
      }
      this.#urgent++
      try {
        await this.#convert(rows)
      } finally {
        this.#urgent--
      }
      this.#doneThrough = rows[rows.length - 1]!.seq
    }
  }

  async #convert(rows: readonly { seq: number; httpJson: string }[]): Promise<void> {
    this.stats.passes++
    const writes: Promise<unknown>[] = []
    for (let i = 0; i < rows.length; i += this.#chunkSize) {
      // requests first: while the service is busy, wait (a flush or stop does not); measured here,
      // converting even one chunk per 25 ms under full load cost about a tenth of the throughput
      while (!this.#interrupted() && this.#busy()) await this.#sleep(this.#busyDelayMs, () => this.#interrupted())
      const chunk = rows.slice(i, i + this.#chunkSize)
      const cores = await this.#convertChunk(chunk.map(row => row.httpJson))
      for (let k = 0; k < chunk.length; k++) {
        const row = chunk[k]!
        const core = cores[k]!
        if ('json' in core) {
          this.stats.converted++
          writes.push(
            this.#receipts.setCoreJson(row.seq, core.json).catch(err => {
              this.stats.failedWrites++
              this.#log(`core receipt of seq ${row.seq} not stored: ${(err as Error).message}`)
            }),
          )
        } else if (core.problem === 'foreign_key') {
          this.stats.skippedForeign++
        } else {
          this.stats.skippedInvalid++
          this.#log(`receipt at seq ${row.seq} has no core form: ${core.detail}`)
        }
        this.#cursor = row.seq
      }
      // never hold the event loop for a whole batch
      await yieldToEventLoop()
    }
    await Promise.all(writes)
  }

  async #convertChunk(httpJsons: string[]) {
    if (this.#convertElsewhere !== undefined) {
      try {
        return await this.#convertElsewhere(httpJsons)
      } catch (err) {
        this.#log(`core backfill converts on the main thread: ${(err as Error).message}`)
      }
    }
    const signer = this.#signer()
    return httpJsons.map(json => toCoreJson(json, signer))
  }

  #markDone(through: number): void {
    this.#doneThrough = Math.max(this.#doneThrough, through)
    const ready = this.#waiters.filter(w => w.target <= this.#doneThrough)
    this.#waiters = this.#waiters.filter(w => w.target > this.#doneThrough)
    for (const waiter of ready) waiter.resolve()
  }

  // Sleeps `ms` (0: no time limit) or until a notification that `accept` takes.
  #sleep(ms: number, accept: () => boolean): Promise<void> {
    return new Promise(resolve => {
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        clearTimeout(timer)
        this.#wake = undefined
        resolve()
      }
      this.#wake = () => {
        if (accept()) done()
      }
      if (ms > 0) timer = setTimeout(done, ms).unref()
    })
  }
}
