// The signing thread's entry point. It holds the authority seed it was started with and answers
// batches of texts with their signatures (hex), in order. Nothing else runs here.
import { parentPort, workerData } from 'node:worker_threads'
import { createSigner, utf8 } from '@gate/sdk'
import { BATCH_SEPARATOR, type SignBatch, type SignBatchResult } from './sign-batch.js'

const signer = createSigner({ secret: (workerData as { seed: Uint8Array }).seed })

parentPort!.on('message', (batch: SignBatch) => {
  let answer: SignBatchResult
  try {
    answer = { id: batch.id, signatures: batch.texts.split(BATCH_SEPARATOR).map(text => signer.sign(utf8(text))).join(',') }
  } catch (err) {
    answer = { id: batch.id, error: (err as Error).message }
  }
  parentPort!.postMessage(answer)
})
