// The receipt append thread's entry point (append-thread.ts): its own node:sqlite connection to the
// receipt store's file, and one transaction per batch it is sent. Nothing else runs here.
import { parentPort, workerData } from 'node:worker_threads'
import type { AppendAnswer, AppendRequest } from './append-thread.js'
import { appendRowsAsValues } from './receipt-append.js'
import { openDatabase, type DatabaseOptions } from './sqlite-driver.js'

const { path, database, walAutocheckpointPages } = workerData as { path: string; database: DatabaseOptions; walAutocheckpointPages: number }

try {
  const db = await openDatabase(path, { ...database, driver: 'node:sqlite' }, { store: 'receipts (append thread)' })
  await db.exec(`PRAGMA wal_autocheckpoint = ${walAutocheckpointPages}`)
  parentPort!.on('message', async (request: AppendRequest) => {
    if (request === 'close') {
      await db.close().catch(() => undefined)
      parentPort!.close()
      return
    }
    let answer: AppendAnswer
    try {
      answer = { id: request.id, ...(await appendRowsAsValues(db, request.rows)) }
    } catch (err) {
      answer = { id: request.id, error: (err as Error).message }
    }
    parentPort!.postMessage(answer)
  })
  parentPort!.postMessage({ ready: true } satisfies AppendAnswer)
} catch (err) {
  parentPort!.postMessage({ ready: false, error: (err as Error).message } satisfies AppendAnswer)
}
