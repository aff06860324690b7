// A receipt writer thread that starts, says it is ready, answers calls about a hosted checkpointer, and
// exits when the first batch arrives: the fault of a thread that dies with writes in flight, which the
// real one cannot be made to produce.
import { parentPort } from 'node:worker_threads'

parentPort!.on('message', (request: unknown) => {
  if (typeof request === 'object' && request !== null && 'call' in request) parentPort!.postMessage({ call: (request as { call: number }).call })
  else process.exit(3)
})
parentPort!.postMessage({ ready: true })
