// Signing off the event loop. An Ed25519 signature is the largest single cost of an evaluation (about
// 70 µs here, a third of the sidecar's CPU per request), so the sidecar signs receipts on a worker
// thread while the main thread parses, evaluates and commits the next requests. Texts to sign are
// queued and sent as one message per event-loop turn, so the hop costs one postMessage per batch, not
// per receipt. Only while the event loop is saturated (createLoopPressure): otherwise the hop costs more
// than the signature it saves, and texts are signed inline. The same thread converts stored receipts to
// their core form for the core-receipt backfill, whose re-signing would otherwise hold the event loop
// for milliseconds at a time.
//
// If the thread fails (it should not: it only signs), callers waiting on it get a SigningError
// (gate_receipt_sign_failed, so evaluations fail closed) and later work is done on the main thread.
import type { Worker } from 'node:worker_threads'
import { SigningError, utf8, type Signer } from '@gate/sdk'
import { toCoreJson, type CoreFormResult } from '@gate/trust'
import { createLoopPressure } from '@gate/sdk/server'
import { BATCH_SEPARATOR, type BatchResult, type CoreBatch, type SignBatch } from './sign-batch.js'
import { startWorker } from '../worker-threads.js'

/** Signs the UTF-8 bytes of a text, possibly elsewhere; resolves to the wire-form signature. */
export interface TextSigner {
  readonly publicKey: string
  signText(text: string): Promise<string>
  /** The core forms of stored HttpReceipts under this key, in order (see `toCoreJson`). */
  toCoreJsons(httpJsons: readonly string[]): Promise<CoreFormResult[]>
  /** Stops any thread behind it; work afterwards is done on the calling thread. */
  close(): Promise<void>
}

/** Signs on the calling thread (tests, tools, and the fallback of the worker signer). */
export function inlineTextSigner(signer: Signer): TextSigner {
  return {
    publicKey: signer.publicKey,
    signText: async text => signer.sign(utf8(text)),
    toCoreJsons: async httpJsons => httpJsons.map(json => toCoreJson(json, signer)),
    close: async () => undefined,
  }
}

interface Waiting {
  resolve: (signature: string) => void
  reject: (err: Error) => void
}

/** What to do with the answer to one batch in flight. */
interface InFlight {
  settle(answer: BatchResult): void
  fail(err: Error): void
}

const CLOSE_WAIT_MS = 5000

/** The error for an answer that is not the one the batch asked for. */
function threadFailure(answer: BatchResult): SigningError {
  return new SigningError(`the signing thread failed: ${'error' in answer ? answer.error : 'unexpected answer'}`)
}

/** Options of `startWorkerSigner`. */
export interface WorkerSignerOptions {
  log?: (line: string) => void
  /**
   * When false, texts are signed inline: the thread is used only while this answers true. Default: the
   * event loop is saturated (createLoopPressure), so a lightly loaded sidecar never pays the thread hop.
   */
  offload?: () => boolean
}

const SIGNING_THREAD = new URL('./signing-worker.js', import.meta.url)

/**
 * Starts a signing thread for an Ed25519 seed. `fallback` must be a signer for the same key: it works
 * once the thread is gone, and whenever `offload` says so. Resolves when the thread is ready to sign;
 * a thread that cannot start is logged and leaves every text to `fallback`.
 */
export async function startWorkerSigner(seed: Uint8Array, fallback: Signer, options: WorkerSignerOptions = {}): Promise<TextSigner> {
  return startSigningThread(SIGNING_THREAD, seed, fallback, options)
}

/** `startWorkerSigner` with the thread's entry point given, so tests can start one that fails on cue. */
export async function startSigningThread(entry: URL, seed: Uint8Array, fallback: Signer, options: WorkerSignerOptions = {}): Promise<TextSigner> {
  const log = options.log ?? (() => undefined)
  const offload = options.offload ?? createLoopPressure()
  const inline = inlineTextSigner(fallback)
  let worker: Worker
  try {
    worker = await startWorker(entry, { seed: Uint8Array.from(seed) }, 'the signing thread did not start')
  } catch (err) {
    log(`${(err as Error).message}; receipts are signed on the main thread`)
    return inline
  }

  let queued: { text: string; waiting: Waiting }[] = []
  let scheduled = false
  let nextId = 1
  const inFlight = new Map<number, InFlight>()
  let gone: string | undefined

  // The thread is ref'd while a batch is out, so a caller awaiting one is never left with an unsettled
  // promise by an event loop that ran out of other work, and unref'd otherwise: a signer never keeps
  // the process alive by itself.
  const send = (batch: InFlight, message: (id: number) => SignBatch | CoreBatch) => {
    const id = nextId++
    if (inFlight.size === 0) worker.ref()
    inFlight.set(id, batch)
    worker.postMessage(message(id))
  }
  const answered = (id: number): InFlight | undefined => {
    const batch = inFlight.get(id)
    if (batch === undefined) return undefined
    inFlight.delete(id)
    if (inFlight.size === 0) worker.unref()
    return batch
  }
  const failAll = (why: string) => {
    const batches = [...inFlight.values()]
    inFlight.clear()
    worker.unref()
    for (const batch of batches) batch.fail(new SigningError(`the signing thread failed: ${why}`))
  }
  const retire = (why: string) => {
    if (gone !== undefined) return
    gone = why
    log(`signing thread stopped (${why}); signing goes on on the main thread`)
    failAll(why)
    // anything queued but not yet sent is signed here
    const rest = queued
    queued = []
    for (const { text, waiting } of rest) signInline(text, waiting)
  }
  const signInline = (text: string, waiting: Waiting) => {
    try {
      waiting.resolve(fallback.sign(utf8(text)))
    } catch (err) {
      waiting.reject(new SigningError('the signer failed', err))
    }
  }
  const sendSignBatch = () => {
    scheduled = false
    if (queued.length === 0 || gone !== undefined) return
    const batch = queued
    queued = []
    send({
      settle(answer) {
        if (!('signatures' in answer)) return this.fail(threadFailure(answer))
        const signatures = answer.signatures.split(',')
        for (let i = 0; i < batch.length; i++) {
          const signature = signatures[i]
          if (signature !== undefined && signature !== '') batch[i]!.waiting.resolve(signature)
          else batch[i]!.waiting.reject(new SigningError('the signing thread answered fewer signatures than asked'))
        }
      },
      fail: err => batch.forEach(b => b.waiting.reject(err)),
    }, id => ({ id, texts: batch.map(b => b.text).join(BATCH_SEPARATOR) }))
  }

  worker.on('message', (answer: BatchResult) => {
    answered(answer.id)?.settle(answer)
  })
  worker.on('error', err => retire(err.message))
  worker.on('exit', code => retire(`exited with code ${code}`))

  return {
    publicKey: fallback.publicKey,
    signText(text: string): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        const waiting = { resolve, reject }
        if (gone !== undefined || !offload() || text.includes(BATCH_SEPARATOR)) return signInline(text, waiting)
        queued.push({ text, waiting })
        if (!scheduled) {
          scheduled = true
          setImmediate(sendSignBatch)
        }
      })
    },
    toCoreJsons(httpJsons: readonly string[]): Promise<CoreFormResult[]> {
      if (gone !== undefined) return inline.toCoreJsons(httpJsons)
      return new Promise<CoreFormResult[]>((resolve, reject) => {
        send({
          settle(answer) {
            if ('cores' in answer && answer.cores.length === httpJsons.length) resolve(answer.cores)
            else reject(threadFailure(answer))
          },
          fail: reject,
        }, id => ({ id, httpJsons: [...httpJsons] }))
      })
    },
    async close() {
      if (gone !== undefined) return
      // let batches already sent come back before the thread goes (bounded)
      const deadline = Date.now() + CLOSE_WAIT_MS
      while ((inFlight.size > 0 || queued.length > 0) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 1))
      gone = 'closed'
      failAll('closed')
      await worker.terminate()
    },
  }
}
