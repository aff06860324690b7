// The WAL checkpoint thread's entry point: its own connection to one database file, and a PASSIVE
// checkpoint whenever asked. PASSIVE copies what it can without waiting for or blocking any writer or
// reader, so the writer on the main thread never waits for this thread.
import { fdatasyncSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { openDatabase, type DatabaseOptions } from './sqlite-driver.js'
import type { CheckpointAnswer, CheckpointRequest } from './wal-checkpointer.js'

const { path, options } = workerData as { path: string; options: DatabaseOptions }

try {
  const db = await openDatabase(path, options, { store: 'receipts (checkpoint thread)' })
  // the main thread's descriptor of the database file (it closes it after the store's connections)
  let dbFd: number | undefined
  parentPort!.on('message', async (request: CheckpointRequest) => {
    if (typeof request === 'object') {
      dbFd = request.dbFd
      return
    }
    if (request === 'close') {
      await db.close().catch(() => undefined)
      parentPort!.close()
      return
    }
    let answer: CheckpointAnswer
    try {
      // one row: busy (1 when another checkpoint held the lock), log (WAL frames), checkpointed (frames copied)
      const row = await db.get<{ busy: number; log: number; checkpointed: number }>('PRAGMA wal_checkpoint(PASSIVE)')
      const log = row?.log ?? 0
      const checkpointed = row?.checkpointed ?? 0
      // SQLite syncs the database file only when a checkpoint reaches the end of the WAL, which under
      // steady writes never happens here; sync what was copied, so the writer's own checkpoint later
      // finds little left to flush.
      if (checkpointed > 0 && dbFd !== undefined) fdatasyncSync(dbFd)
      answer = { ok: true, busy: row?.busy === 1, log, checkpointed }
    } catch (err) {
      answer = { ok: false, error: (err as Error).message }
    }
    parentPort!.postMessage(answer)
  })
  parentPort!.postMessage({ ok: true, ready: true } satisfies CheckpointAnswer)
} catch (err) {
  parentPort!.postMessage({ ok: false, error: (err as Error).message } satisfies CheckpointAnswer)
}
