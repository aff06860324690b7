// A receipt writer thread that starts, says it is ready, and exits when the first batch arrives: the
// fault of a thread that dies with writes in flight, which the real one cannot be made to produce.
import { parentPort } from 'node:worker_threads'

parentPort!.once('message', () => process.exit(3))
parentPort!.postMessage({ ready: true })
