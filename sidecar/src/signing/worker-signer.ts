// Receipt signing off the event loop. An Ed25519 signature is the largest single cost of an evaluation
// (about 70 µs here, a third of the sidecar's CPU per request), so the sidecar signs receipts on a
// worker thread while the main thread parses, evaluates and commits the next requests. Texts to sign
// are queued and sent as one message per event-loop turn, so the hop costs one postMessage per batch,
// not per receipt.
//
// If the thread fails (it should not: it only signs), requests waiting on it get a SigningError
// (gate_receipt_sign_failed, so they fail closed) and later receipts are signed on the main thread.
import { Worker } from 'node:worker_threads'
import { SigningError, utf8, type Signer } from '@gate/sdk'
import { BATCH_SEPARATOR, type SignBatch, type SignBatchResult } from './sign-batch.js'

/** Signs the UTF-8 bytes of a text, possibly elsewhere; resolves to the wire-form signature. */
export interface TextSigner {
  readonly publicKey: string
  signText(text: string): Promise<string>
  /** Stops any thread behind it; signing afterwards falls back to the main thread. */
  close(): Promise<void>
}

interface Waiting {
  resolve: (signature: string) => void
  reject: (err: Error) => void
}

/** Signs on the calling thread (tests, tools, and the fallback of the worker signer). */
export function inlineTextSigner(signer: Signer): TextSigner {
  return {
    publicKey: signer.publicKey,
    signText: async text => signer.sign(utf8(text)),
    close: async () => undefined,
  }
}

/**
 * Starts a signing thread for an Ed25519 seed. `fallback` must be a signer for the same key: it signs
 * once the thread is gone. Resolves when the thread is up.
 */
export async function startWorkerSigner(seed: Uint8Array, fallback: Signer, log: (line: string) => void = () => undefined): Promise<TextSigner> {
  const worker = new Worker(new URL('./signing-worker.js', import.meta.url), { workerData: { seed: Uint8Array.from(seed) } })
  await new Promise<void>((resolve, reject) => {
    worker.once('online', resolve)
    worker.once('error', reject)
  })
  // a signer never keeps the process alive by itself
  worker.unref()

  let queued: { text: string; waiting: Waiting }[] = []
  let scheduled = false
  let nextId = 1
  const inFlight = new Map<number, Waiting[]>()
  let gone: string | undefined

  const failAll = (why: string) => {
    for (const batch of inFlight.values()) for (const w of batch) w.reject(new SigningError(`the signing thread failed: ${why}`))
    inFlight.clear()
  }
  const retire = (why: string) => {
    if (gone !== undefined) return
    gone = why
    log(`signing thread stopped (${why}); receipts are now signed on the main thread`)
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
  const send = () => {
    scheduled = false
    if (queued.length === 0 || gone !== undefined) return
    const batch = queued
    queued = []
    const id = nextId++
    inFlight.set(id, batch.map(b => b.waiting))
    worker.postMessage({ id, texts: batch.map(b => b.text).join(BATCH_SEPARATOR) } satisfies SignBatch)
  }

  worker.on('message', (answer: SignBatchResult) => {
    const waiting = inFlight.get(answer.id)
    if (waiting === undefined) return
    inFlight.delete(answer.id)
    if ('error' in answer) {
      for (const w of waiting) w.reject(new SigningError(`the signing thread failed: ${answer.error}`))
      return
    }
    const signatures = answer.signatures.split(',')
    for (let i = 0; i < waiting.length; i++) {
      const signature = signatures[i]
      if (typeof signature === 'string') waiting[i]!.resolve(signature)
      else waiting[i]!.reject(new SigningError('the signing thread answered fewer signatures than asked'))
    }
  })
  worker.on('error', err => retire(err.message))
  worker.on('exit', code => retire(`exited with code ${code}`))

  return {
    publicKey: fallback.publicKey,
    signText(text: string): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        const waiting = { resolve, reject }
        if (gone !== undefined || text.includes(BATCH_SEPARATOR)) return signInline(text, waiting)
        queued.push({ text, waiting })
        if (!scheduled) {
          scheduled = true
          setImmediate(send)
        }
      })
    },
    async close() {
      if (gone !== undefined) return
      // let batches already sent come back before the thread goes (bounded: 5 s)
      const deadline = Date.now() + 5000
      while ((inFlight.size > 0 || queued.length > 0) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 1))
      gone = 'closed'
      failAll('closed')
      await worker.terminate()
    },
  }
}
