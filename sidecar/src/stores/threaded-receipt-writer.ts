// The threaded receipt writer: one thread (receipt-writer-thread.ts) holds the authority seed and a
// write connection to the receipt file, and signs, inserts and commits whole batches. The event loop
// sends the receipt bodies of one turn as one message and resolves each write when the thread answers
// after COMMIT, so an answer still waits for its receipt's commit. Under load this takes the signature
// and the INSERT off the event loop (about half its CPU per receipt, docs/architecture.md), at one
// message each way per batch.
//
// Chosen at startup for a durable store. A thread that cannot start leaves every write to the inline
// writer (logged once); one that dies fails the writes it held (their commit is unknown, so their
// requests fail closed) and leaves every later write to the inline writer.
import type { Worker } from 'node:worker_threads'
import { SigningError, type CoreReceipt, type HttpReceipt, type HttpReceiptBody } from '@gate/sdk'
import { ReceiptPersistenceError } from '../errors.js'
import { closeWorker, startWorker } from '../worker-threads.js'
import type { CommittedReceipts } from './receipt-log.js'
import type { ReceiptStore } from './receipt-store.js'
import type { CoreReceiptDraft, CoreReceiptWriteContext, ReceiptWriteContext, ReceiptWriter, WrittenCoreReceipt, WrittenReceipt } from './receipt-writer.js'

/** One receipt to write: an HttpReceipt body, or a core receipt body (`writeCore`). */
export type WriterItem = { form: 'http'; body: HttpReceiptBody; context: ReceiptWriteContext } | { form: 'core'; body: CoreReceiptDraft; context: CoreReceiptWriteContext }

/** Event loop → writer thread: the receipt bodies of one batch, or the request to finish and close. */
export type WriterRequest = { id: number; items: WriterItem[] } | 'close'

/** One write's outcome: signed and committed, or why not (`code` says whether signing or the row failed). */
export type WriterResult = { receipt: HttpReceipt | CoreReceipt; json: string; seq: number } | { error: string; code: 'gate_receipt_sign_failed' | 'gate_receipt_persistence_failed' }

/** Writer thread → event loop: ready, then one answer per batch (after its COMMIT), or the batch's failure. */
export type WriterAnswer =
  | { ready: true }
  | { ready: false; error: string }
  | { id: number; results: WriterResult[]; committed?: CommittedReceipts }
  | { id: number; error: string }

/** Options of `startThreadedReceiptWriter`. */
export interface ThreadedReceiptWriterOptions {
  /** The durable receipt store: the thread opens its file with the same database options. */
  store: Pick<ReceiptStore, 'path' | 'databaseOptions'>
  /** The authority's key (signingKeyBytes, any algorithm): it goes to the writer thread and nowhere else. */
  seed: Uint8Array
  /** The inline writer over the store's log, for the same key: used when the thread is not running. */
  fallback: ReceiptWriter
  log: (line: string) => void
  /** The thread's entry point, default receipt-writer-thread.js (tests start one that fails on cue). */
  entry?: URL
}

const WRITER_THREAD = new URL('./receipt-writer-thread.js', import.meta.url)

interface Waiting {
  resolve: (written: WrittenReceipt | WrittenCoreReceipt) => void
  reject: (err: Error) => void
}

const CLOSE_WAIT_MS = 5000

/** Starts the writer thread; resolves once it is ready (or with `fallback` when it cannot start). */
export async function startThreadedReceiptWriter(options: ThreadedReceiptWriterOptions): Promise<ReceiptWriter> {
  const { fallback, log } = options
  let worker: Worker
  try {
    worker = await startWorker(options.entry ?? WRITER_THREAD, { path: options.store.path, database: options.store.databaseOptions, seed: Uint8Array.from(options.seed) }, 'the receipt writer thread did not start')
  } catch (err) {
    log(`warning: ${(err as Error).message}; receipts are signed and committed on the main thread`)
    return fallback
  }
  const followers = new Set<(batch: CommittedReceipts) => void>()
  const writeInline = (item: WriterItem): Promise<WrittenReceipt | WrittenCoreReceipt> =>
    item.form === 'http' ? fallback.write(item.body, item.context) : fallback.writeCore(item.body, item.context)
  const enqueue = (item: WriterItem): Promise<WrittenReceipt | WrittenCoreReceipt> => {
    if (gone !== undefined) return writeInline(item)
    return new Promise((resolve, reject) => {
      queued.push({ ...item, resolve, reject })
      if (!scheduled) {
        scheduled = true
        setImmediate(send)
      }
    })
  }
  const inFlight = new Map<number, Waiting[]>()
  let queued: (WriterItem & Waiting)[] = []
  let scheduled = false
  let nextId = 1
  let healthy = true
  let gone: string | undefined
  // resolved when no batch is out (flush and close wait on it)
  const drained: (() => void)[] = []
  const idle = () => (inFlight.size === 0 ? Promise.resolve() : new Promise<void>(resolve => drained.push(resolve)))

  const settle = (id: number): Waiting[] | undefined => {
    const batch = inFlight.get(id)
    inFlight.delete(id)
    // ref'd only while a batch is out: the thread never keeps the process alive by itself
    if (inFlight.size === 0) {
      worker.unref()
      for (const resolve of drained.splice(0)) resolve()
    }
    return batch
  }
  const send = () => {
    scheduled = false
    if (queued.length === 0) return
    const batch = queued
    queued = []
    if (gone !== undefined) {
      for (const w of batch) writeInline(w).then(w.resolve, w.reject)
      return
    }
    const id = nextId++
    if (inFlight.size === 0) worker.ref()
    inFlight.set(id, batch)
    worker.postMessage({ id, items: batch.map(w => ({ form: w.form, body: w.body, context: w.context }) as WriterItem) } satisfies WriterRequest)
  }
  const retire = (why: string) => {
    if (gone !== undefined) return
    gone = why
    log(`warning: the receipt writer thread stopped (${why}); receipts are signed and committed on the main thread from now on`)
    const lost = [...inFlight.keys()].flatMap(id => settle(id) ?? [])
    for (const w of lost) w.reject(new ReceiptPersistenceError(`the receipt writer thread stopped before answering (${why}); the commit is unknown`))
    send()
  }

  worker.on('message', (answer: WriterAnswer) => {
    if (!('id' in answer)) return
    const batch = settle(answer.id)
    if (batch === undefined) return
    if ('error' in answer) {
      healthy = false
      for (const w of batch) w.reject(new ReceiptPersistenceError(`the commit of a batch of ${batch.length} failed (${answer.error})`, { batchSize: batch.length }))
      return
    }
    healthy = true
    if (answer.committed !== undefined) {
      for (const follower of followers) {
        try {
          follower(answer.committed)
        } catch {
          // a follower's failure is its own; the commit stands
        }
      }
    }
    answer.results.forEach((result, i) => {
      const w = batch[i]!
      if ('error' in result) w.reject(result.code === 'gate_receipt_sign_failed' ? new SigningError(result.error) : new ReceiptPersistenceError(result.error))
      else w.resolve(result as WrittenReceipt)
    })
  })
  worker.on('error', err => retire(err.message))
  worker.on('exit', code => retire(`exited with code ${code}`))

  return {
    write(body, context = {}) {
      return enqueue({ form: 'http', body, context }) as Promise<WrittenReceipt>
    },
    writeCore(body, context) {
      return enqueue({ form: 'core', body, context }) as Promise<WrittenCoreReceipt>
    },
    onCommitted(follower) {
      followers.add(follower)
      const inline = fallback.onCommitted(follower)
      return () => {
        followers.delete(follower)
        inline()
      }
    },
    async flush() {
      send()
      await idle()
      await fallback.flush()
    },
    get healthy() {
      return gone === undefined ? healthy : fallback.healthy
    },
    async close() {
      send()
      await idle()
      if (gone === undefined) {
        gone = 'closed'
        await closeWorker(worker, 'close' satisfies WriterRequest, CLOSE_WAIT_MS)
      }
      await fallback.close()
    },
  }
}
