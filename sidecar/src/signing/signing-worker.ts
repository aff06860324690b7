// The signing thread's entry point. It holds the authority seed it was started with and answers
// batches: texts with their signatures (hex, in order), stored HttpReceipts with their core form.
// Nothing else runs here. It says it is ready once its modules are loaded and its signer is made, so
// the first batch is never timed against the thread's start-up (seconds on a busy machine).
import { parentPort, workerData } from 'node:worker_threads'
import { createSigner, utf8, type Signer } from '@gate/sdk'
import { toCoreJson } from '@gate/trust'
import { BATCH_SEPARATOR, type BatchResult, type CoreBatch, type SignBatch } from './sign-batch.js'
import type { ThreadReady } from '../worker-threads.js'

let signer: Signer | undefined
try {
  signer = createSigner({ secret: (workerData as { seed: Uint8Array }).seed })
} catch (err) {
  parentPort!.postMessage({ ready: false, error: (err as Error).message } satisfies ThreadReady)
}

if (signer !== undefined) {
  const sign = signer
  parentPort!.on('message', (batch: SignBatch | CoreBatch) => {
    let answer: BatchResult
    try {
      answer =
        'texts' in batch
          ? { id: batch.id, signatures: batch.texts.split(BATCH_SEPARATOR).map(text => sign.sign(utf8(text))).join(',') }
          : { id: batch.id, cores: batch.httpJsons.map(json => toCoreJson(json, sign)) }
    } catch (err) {
      answer = { id: batch.id, error: (err as Error).message }
    }
    parentPort!.postMessage(answer)
  })
  parentPort!.postMessage({ ready: true } satisfies ThreadReady)
}
