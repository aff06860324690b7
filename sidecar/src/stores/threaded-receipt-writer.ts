// The threaded receipt writer: one thread (receipt-writer-thread.ts) holds the authority seed and a
// write connection to the receipt file, and signs, inserts and commits whole batches. The event loop
// sends the receipt bodies of one turn as one message and resolves each write when the thread answers
// after COMMIT, so an answer still waits for its receipt's commit. Under load this takes the signature
// and the INSERT off the event loop (about half its CPU per receipt, docs/architecture.md), at one
// message each way per batch.
//
// For a lone request (few writes outstanding, the event loop not busy), a write is signed and committed
// right here instead (the inline writer): a hop to another thread and back costs a request more latency and CPU than the work it moves
// (each wake-up of a sleeping thread costs the waker ~0.2 ms of CPU on a shared two-core VM,
// docs/performance.md). The inline commits and the thread's take turns through a lock both threads see
// (write-lock.ts), so the two connections never write at once (SQLite would make the second sleep in
// its busy handler): a write that finds the lock taken by the thread goes to the thread. The main
// connection leaves WAL checkpoints to the thread (`mainConnection`), which checkpoints the inline
// commits it did not make itself.
//
// The thread also hosts the transparency log's checkpointer when asked (`startCheckpointer`,
// hosted-checkpointer.ts): it hears of the thread's commits directly and of the inline ones by a
// message at most every INLINE_NOTICE_MS; its tree writes and the inline commits take turns through a
// lock both threads see (write-lock.ts).
//
// Chosen at startup for a durable store. A thread that cannot start leaves every write to the inline
// writer (logged once); one that dies fails the writes it held (their commit is unknown, so their
// requests fail closed) and leaves every later write to the inline writer.
import type { Worker } from 'node:worker_threads'
import { createSignerFromKeyBytes, signedHttpReceipt, SigningError, type CoreReceipt, type HttpReceiptBody } from '@gate/sdk'
import { ReceiptPersistenceError } from '../errors.js'
import { createLoopPressure } from '@gate/sdk/server'
import type { StoredReceiptStep } from '@gate/trust'
import type { CheckpointerControl, HostedCheckpointerSettings, LeafHooks } from '../transparency/checkpointer-control.js'
import { closeWorker, startWorker } from '../worker-threads.js'
import type { CommittedReceipts } from '@gate/trust'
import type { ReceiptLog } from './receipt-log.js'
import { createThreadedCheckpointer, type CheckpointerRequest, type ThreadedCheckpointer } from './threaded-checkpointer.js'
import { createWriteLock, HELD_BY_EVENT_LOOP, isWriteLockWanted, releaseWriteLock, tryWriteLock } from './write-lock.js'
import { bindReceiptContext } from './receipt-columns.js'
import type { ReceiptStore } from './receipt-store.js'
import type { CoreReceiptDraft, CoreReceiptWriteContext, ReceiptWriteContext, ReceiptWriter, WrittenCoreReceipt, WrittenReceipt } from './receipt-writer.js'

/** One receipt to write: an HttpReceipt body, or a core receipt body (`writeCore`). */
export type WriterItem = { form: 'http'; body: HttpReceiptBody; context: ReceiptWriteContext } | { form: 'core'; body: CoreReceiptDraft; context: CoreReceiptWriteContext }

/**
 * Event loop → writer thread: the receipt bodies of one batch; a request about the hosted checkpointer
 * (`call` numbers its answer); the batches inline commits made; the answer to the thread's question which
 * signers the log accepts; or the request to finish and close.
 */
export type WriterRequest =
  | { id: number; items: WriterItem[] }
  | (CheckpointerRequest & { call: number })
  | { committed: CommittedReceipts[] }
  | { signers: number; keys: string[]; error?: string }
  | 'close'

/**
 * One write's outcome: signed and committed (an HTTP receipt by its id and signature, rebuilt from the
 * body it was sent as), or why not (`code` says whether signing or the row failed).
 */
export type WriterResult =
  | { form: 'http'; id: string; signature: string; json: string; seq: number }
  | { form: 'core'; receipt: CoreReceipt; json: string; seq: number }
  | { error: string; code: 'gate_receipt_sign_failed' | 'gate_receipt_persistence_failed' }

/** Writer thread → event loop: ready, then one answer per batch (after its COMMIT), or the batch's failure. */
export type WriterAnswer =
  | { ready: true }
  | { ready: false; error: string }
  | { id: number; results: WriterResult[]; committed?: CommittedReceipts }
  | { id: number; error: string }
  | { call: number; result?: unknown; error?: string }
  | { log: string }
  | { checkpointerError: string | null }
  | { askSigners: number; keys: string[] }
  | { unverified: StoredReceiptStep }

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
  /**
   * True while the event loop is too busy to sign and commit a write itself; default: its utilization
   * over the last 100 ms is at least WRITE_INLINE_BELOW. Tests pass \`() => true\` to keep every write on the thread.
   */
  pressure?: () => boolean
  /** The fallback's connection: its automatic WAL checkpoints are handed to the thread while it runs. */
  mainConnection?: Pick<ReceiptLog, 'setWalAutocheckpoint'>
}

/**
 * Event-loop utilization below which a write is committed inline when the thread is idle. Above it the
 * thread's halving of the loop's CPU per receipt pays for its hops.
 */
export const WRITE_INLINE_BELOW = 0.5

/** A write goes inline only while fewer writes than this are outstanding (a lone request's, or two). */
export const INLINE_WHILE_OUTSTANDING_BELOW = 2

/** The inline commits reach the hosted checkpointer in one message per this many ms at most (it gathers 100 ms itself). */
export const INLINE_NOTICE_MS = 100

const WRITER_THREAD = new URL('./receipt-writer-thread.js', import.meta.url)

interface Waiting {
  resolve: (written: WrittenReceipt | WrittenCoreReceipt) => void
  reject: (err: Error) => void
}

type Queued = WriterItem & Waiting

const CLOSE_WAIT_MS = 5000

/** Starts the writer thread; resolves once it is ready (or with `fallback` when it cannot start). */
export async function startThreadedReceiptWriter(options: ThreadedReceiptWriterOptions): Promise<ReceiptWriter> {
  const { fallback, log } = options
  let worker: Worker
  const lock = createWriteLock()
  try {
    worker = await startWorker(options.entry ?? WRITER_THREAD, { path: options.store.path, database: options.store.databaseOptions, seed: Uint8Array.from(options.seed), lock }, 'the receipt writer thread did not start')
  } catch (err) {
    log(`warning: ${(err as Error).message}; receipts are signed and committed on the main thread`)
    return fallback
  }
  // the key names its algorithm (signingKeyBytes); the receipts the thread signs carry its public key
  const publicKey = createSignerFromKeyBytes(options.seed).publicKey
  const pressure = options.pressure ?? createLoopPressure({ threshold: WRITE_INLINE_BELOW, windowMs: 100 })
  const mainConnection = options.mainConnection
  // the thread checkpoints the WAL; the main connection's inline commits would otherwise do it on this loop
  await mainConnection?.setWalAutocheckpoint(0)
  const followers = new Set<(batch: CommittedReceipts) => void>()
  const writeInline = (item: WriterItem): Promise<WrittenReceipt | WrittenCoreReceipt> =>
    item.form === 'http' ? fallback.write(item.body, item.context) : fallback.writeCore(item.body, item.context)
  // inline: the write lock held from the first inline write to the last one's settling
  const writeHere = (item: WriterItem): Promise<WrittenReceipt | WrittenCoreReceipt> => {
    inlineInFlight++
    const done = () => {
      healthy = fallback.healthy
      if (--inlineInFlight === 0) releaseWriteLock(lock, HELD_BY_EVENT_LOOP)
    }
    const written = writeInline(item)
    written.then(done, done)
    return written
  }
  const enqueue = (item: WriterItem): Promise<WrittenReceipt | WrittenCoreReceipt> => {
    if (gone !== undefined) return writeInline(item)
    // A lone request's write goes inline: few writes outstanding and an idle loop (on a loaded host the
    // loop can look idle while it waits under load: the count is what tells the two apart). The last
    // condition takes the write lock (or finds it already ours): the thread's writes wait meanwhile.
    if (inlineInFlight + onThread < INLINE_WHILE_OUTSTANDING_BELOW && !pressure() && !isWriteLockWanted(lock) && tryWriteLock(lock, HELD_BY_EVENT_LOOP)) return writeHere(item)
    onThread++
    return new Promise((resolve, reject) => {
      queued.push({ ...item, resolve, reject })
      schedule()
    })
  }
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(send)
  }
  const inFlight = new Map<number, Queued[]>()
  let queued: Queued[] = []
  let inlineInFlight = 0
  // writes handed to the thread path and not settled yet
  let onThread = 0
  let scheduled = false
  let nextId = 1
  let healthy = true
  let gone: string | undefined
  // resolved when no batch is out (flush and close wait on it)
  const drained: (() => void)[] = []
  const idle = () => (inFlight.size === 0 ? Promise.resolve() : new Promise<void>(resolve => drained.push(resolve)))
  // ref'd only while a batch or a call is out: the thread never keeps the process alive by itself
  let outstanding = 0
  const hold = () => {
    if (outstanding++ === 0) worker.ref()
  }
  const release = () => {
    if (--outstanding === 0) worker.unref()
  }

  const settle = (id: number): Queued[] | undefined => {
    const batch = inFlight.get(id)
    if (batch === undefined) return undefined
    inFlight.delete(id)
    onThread -= batch.length
    release()
    if (inFlight.size === 0) for (const resolve of drained.splice(0)) resolve()
    return batch
  }

  // the hosted checkpointer: calls answered by number, inline commits told in one message per INLINE_NOTICE_MS
  const calls = new Map<number, Waiting>()
  let nextCall = 1
  let hosted: ThreadedCheckpointer | undefined
  let hooks: LeafHooks | undefined
  let noticeTimer: NodeJS.Timeout | undefined
  let noticed: CommittedReceipts[] = []
  const call = (request: CheckpointerRequest): Promise<unknown> => {
    if (gone !== undefined) return Promise.reject(new Error(`the receipt writer thread stopped (${gone})`))
    const n = nextCall++
    hold()
    return new Promise((resolve, reject) => {
      calls.set(n, { resolve: resolve as Waiting['resolve'], reject })
      worker.postMessage({ ...request, call: n } satisfies WriterRequest)
    })
  }
  const answerCall = (n: number, error: string | undefined, result: unknown) => {
    const waiting = calls.get(n)
    if (waiting === undefined) return
    calls.delete(n)
    release()
    if (error === undefined) waiting.resolve(result as WrittenReceipt)
    else waiting.reject(new Error(error))
  }
  // sent at once before a flush's checkpoint too, so the thread knows every inline row as its own
  const sendNotices = () => {
    clearTimeout(noticeTimer)
    noticeTimer = undefined
    if (noticed.length === 0) return
    const committed = noticed
    noticed = []
    if (gone === undefined) worker.postMessage({ committed } satisfies WriterRequest)
  }
  const noticeInline = (batch: CommittedReceipts) => {
    if (hosted === undefined) return
    noticed.push(batch)
    if (noticeTimer !== undefined) return
    noticeTimer = setTimeout(sendNotices, INLINE_NOTICE_MS)
    noticeTimer.unref()
  }
  const send = () => {
    scheduled = false
    if (queued.length === 0) return
    const batch = queued
    queued = []
    if (gone !== undefined) {
      onThread -= batch.length
      for (const w of batch) writeInline(w).then(w.resolve, w.reject)
      return
    }
    const id = nextId++
    hold()
    inFlight.set(id, batch)
    worker.postMessage({ id, items: batch.map(w => ({ form: w.form, body: w.body, context: w.context }) as WriterItem) } satisfies WriterRequest)
  }
  const retire = (why: string) => {
    if (gone !== undefined) return
    gone = why
    log(`warning: the receipt writer thread stopped (${why}); receipts are signed and committed on the main thread from now on`)
    mainConnection?.setWalAutocheckpoint(options.store.databaseOptions.walAutocheckpointPages).catch(() => undefined)
    const lost = [...inFlight.keys()].flatMap(id => settle(id) ?? [])
    for (const w of lost) w.reject(new ReceiptPersistenceError(`the receipt writer thread stopped before answering (${why}); the commit is unknown`))
    for (const n of [...calls.keys()]) answerCall(n, `the receipt writer thread stopped (${why})`, undefined)
    clearTimeout(noticeTimer)
    hosted?.threadGone()
    send()
  }

  // everything written so far committed, inline or on the thread (a batch held for an inline commit included)
  const drainAll = async (): Promise<void> => {
    for (;;) {
      await fallback.flush()
      send()
      await idle()
      if (queued.length === 0 && inlineInFlight === 0) return sendNotices()
      await new Promise(resolve => setImmediate(resolve))
    }
  }

  worker.on('message', (answer: WriterAnswer) => {
    if ('call' in answer) return answerCall(answer.call, answer.error, answer.result)
    if ('log' in answer) return log(answer.log)
    if ('checkpointerError' in answer) return hosted?.reportError(answer.checkpointerError)
    if ('unverified' in answer) return hooks?.onUnverified?.(answer.unverified)
    if ('askSigners' in answer) {
      const ask = answer.askSigners
      const answerAsk = (request: WriterRequest) => {
        if (gone === undefined) worker.postMessage(request)
      }
      if (hooks === undefined) return answerAsk({ signers: ask, keys: [], error: 'no checkpointer was started here' })
      hooks.acceptedSigners(answer.keys).then(
        keys => answerAsk({ signers: ask, keys: [...keys] }),
        err => answerAsk({ signers: ask, keys: [], error: (err as Error).message }),
      )
      return
    }
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
      else if (result.form === 'core') w.resolve({ receipt: result.receipt, json: result.json, seq: result.seq })
      else w.resolve({ receipt: signedHttpReceipt(bindReceiptContext(w.body as HttpReceiptBody, w.context), publicKey, result.id, result.signature), json: result.json, seq: result.seq })
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
    flush: () => drainAll(),
    async startCheckpointer(settings: HostedCheckpointerSettings, local: () => CheckpointerControl, leafHooks: LeafHooks): Promise<CheckpointerControl> {
      if (gone !== undefined || hosted !== undefined) return local()
      hooks = leafHooks
      const control = createThreadedCheckpointer({ call, flushWriter: drainAll, local })
      try {
        await call({ control: 'startCheckpointer', settings })
      } catch (err) {
        log(`warning: the transparency log's checkpointer could not start on the receipt writer thread (${(err as Error).message}); it runs on the main thread`)
        return local()
      }
      hosted = control
      fallback.onCommitted(noticeInline)
      return control
    },
    get healthy() {
      return gone === undefined ? healthy : fallback.healthy
    },
    async close() {
      await drainAll()
      if (gone === undefined) {
        clearTimeout(noticeTimer)
        gone = 'closed'
        await closeWorker(worker, 'close' satisfies WriterRequest, CLOSE_WAIT_MS)
      }
      await fallback.close()
    },
  }
}
