// Single-writer group commit. Every write of a store goes through one queue; whatever accumulated while
// the previous transaction was in flight is committed together in the next one. No timer: the writer
// starts as soon as it is idle (one event-loop turn after the first enqueue, so requests read in the
// same poll phase share a transaction), and load alone makes batches grow. An item's promise settles
// only after its transaction committed or failed: commit before reply, never the other way round.
//
// Both backends' stores queue their writes through it: the SQLite stores of @gate/sidecar (one connection
// per file) and the PostgreSQL receipt log (postgres/pg-receipt-log.ts).
import { InvalidConfigError, type GateError } from '@gate/sdk'
import { ReceiptPersistenceError, StoreClosedError } from '../errors.js'

/** Options of `GroupCommit`. */
export interface GroupCommitOptions<T, R> {
  /** Writes one batch in ONE transaction and returns one result per item, in order; throws to fail the batch. */
  commitBatch: (items: readonly T[]) => Promise<readonly R[]>
  /** Store name for errors, default "receipts". */
  store?: string
  /** Largest batch, default 512 (a 512-row transaction of 1.2 KB receipts takes a few milliseconds). */
  maxBatchSize?: number
  /** The error each item of a failed batch rejects with; default `ReceiptPersistenceError` (gate_receipt_persistence_failed). */
  toError?: (cause: unknown, batchSize: number) => GateError
  /** Called once per failed batch, after `healthy` turned false (the sidecar answers 503 on /gate/health). */
  onError?: (err: GateError) => void
  /** Called when a commit succeeds after a failure. */
  onRecover?: () => void
}

/** Counters for tests and the benchmark. */
export interface GroupCommitStats {
  batches: number
  items: number
  failedBatches: number
  largestBatch: number
}

interface Pending<T, R> {
  item: T
  resolve: (result: R) => void
  reject: (err: GateError) => void
}

/** Defaults of `GroupCommitOptions`. */
export const GROUP_COMMIT_DEFAULTS = Object.freeze({ maxBatchSize: 512, store: 'receipts' })

/** A single-writer queue that commits items in batches and settles each item after its commit. */
export class GroupCommit<T, R = void> {
  readonly #commitBatch: (items: readonly T[]) => Promise<readonly R[]>
  readonly #store: string
  readonly #maxBatchSize: number
  readonly #toError: (cause: unknown, batchSize: number) => GateError
  readonly #onError: ((err: GateError) => void) | undefined
  readonly #onRecover: (() => void) | undefined
  #queue: Pending<T, R>[] = []
  #writing = false
  #scheduled = false
  #closed = false
  #healthy = true
  #lastError: GateError | undefined
  // Items are settled in enqueue order, so "everything enqueued so far" is a count.
  #enqueued = 0
  #settled = 0
  #flushWaiters: { target: number; resolve: () => void }[] = []
  readonly #stats: GroupCommitStats = { batches: 0, items: 0, failedBatches: 0, largestBatch: 0 }

  constructor(options: GroupCommitOptions<T, R>) {
    const maxBatchSize = options.maxBatchSize ?? GROUP_COMMIT_DEFAULTS.maxBatchSize
    if (!Number.isSafeInteger(maxBatchSize) || maxBatchSize < 1) {
      throw new InvalidConfigError('maxBatchSize', 'a positive integer', maxBatchSize)
    }
    this.#commitBatch = options.commitBatch
    this.#store = options.store ?? GROUP_COMMIT_DEFAULTS.store
    this.#maxBatchSize = maxBatchSize
    this.#toError =
      options.toError ??
      ((cause, batchSize) => new ReceiptPersistenceError(`the commit of a batch of ${batchSize} failed (${errorText(cause)})`, { cause, batchSize }))
    this.#onError = options.onError
    this.#onRecover = options.onRecover
  }

  /** False after a failed commit, until a later commit succeeds. */
  get healthy(): boolean {
    return this.#healthy
  }

  /** The error of the last failed batch, cleared by the next successful commit. */
  get lastError(): GateError | undefined {
    return this.#lastError
  }

  /** Items queued or in flight. */
  get pending(): number {
    return this.#queue.length + (this.#writing ? 1 : 0)
  }

  get closed(): boolean {
    return this.#closed
  }

  get stats(): Readonly<GroupCommitStats> {
    return { ...this.#stats }
  }

  /** Queues one item; resolves with its result after the transaction containing it committed. */
  enqueue(item: T): Promise<R> {
    if (this.#closed) return Promise.reject(this.#toError(new StoreClosedError(this.#store), 1))
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      this.#enqueued++
      this.#schedule()
    })
  }

  /** Queues several items back to back (they share a batch when they fit); resolves after all committed. */
  enqueueMany(items: readonly T[]): Promise<R[]> {
    return Promise.all(items.map(item => this.enqueue(item)))
  }

  /** Resolves when everything enqueued so far has been committed or has failed (later items are not waited for). */
  flush(): Promise<void> {
    const target = this.#enqueued
    if (this.#settled >= target) return Promise.resolve()
    return new Promise(resolve => this.#flushWaiters.push({ target, resolve }))
  }

  /** Stops accepting items (later enqueues reject) and resolves once the queue is drained. */
  close(): Promise<void> {
    this.#closed = true
    return this.flush()
  }

  #schedule(): void {
    if (this.#writing || this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    this.#writing = true
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatchSize)
      await this.#commit(batch)
    }
    this.#writing = false
  }

  #settle(count: number): void {
    this.#settled += count
    if (this.#flushWaiters.length === 0) return
    const due = this.#flushWaiters.filter(waiter => waiter.target <= this.#settled)
    this.#flushWaiters = this.#flushWaiters.filter(waiter => waiter.target > this.#settled)
    for (const waiter of due) waiter.resolve()
  }

  async #commit(batch: Pending<T, R>[]): Promise<void> {
    let results: readonly R[]
    try {
      results = await this.#commitBatch(batch.map(pending => pending.item))
      if (results.length !== batch.length) {
        throw new Error(`commitBatch returned ${results.length} results for ${batch.length} items`)
      }
    } catch (cause) {
      this.#stats.failedBatches++
      const error = this.#toError(cause, batch.length)
      this.#healthy = false
      this.#lastError = error
      for (const pending of batch) pending.reject(pending === batch[0] ? error : this.#toError(cause, batch.length))
      this.#settle(batch.length)
      try {
        this.#onError?.(error)
      } catch {
        // A throwing hook must not stop the writer; the failure is already recorded in `healthy`.
      }
      return
    }
    this.#stats.batches++
    this.#stats.items += batch.length
    this.#stats.largestBatch = Math.max(this.#stats.largestBatch, batch.length)
    const recovered = !this.#healthy
    this.#healthy = true
    this.#lastError = undefined
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]!)
    this.#settle(batch.length)
    if (recovered) {
      try {
        this.#onRecover?.()
      } catch {
        // as for onError
      }
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
