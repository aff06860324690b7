// The signing thread's entry point. It holds the authority seed it was started with and answers
// batches: texts with their signatures (hex, in order), stored HttpReceipts with their core form.
// Nothing else runs here.
import { parentPort, workerData } from 'node:worker_threads'
import { createSigner, utf8 } from '@gate/sdk'
import { toCoreJson } from '@gate/trust'
import { BATCH_SEPARATOR, type BatchResult, type CoreBatch, type SignBatch } from './sign-batch.js'

const signer = createSigner({ secret: (workerData as { seed: Uint8Array }).seed })

parentPort!.on('message', (batch: SignBatch | CoreBatch) => {
  let answer: BatchResult
  try {
    answer =
      'texts' in batch
        ? { id: batch.id, signatures: batch.texts.split(BATCH_SEPARATOR).map(text => signer.sign(utf8(text))).join(',') }
        : { id: batch.id, cores: batch.httpJsons.map(json => toCoreJson(json, signer)) }
  } catch (err) {
    answer = { id: batch.id, error: (err as Error).message }
  }
  parentPort!.postMessage(answer)
})
