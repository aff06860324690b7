// Receipt appends on a thread of their own, for stores on node:sqlite. That driver runs statements on
// the calling thread, and on the main thread every append transaction (BEGIN, the multi-row INSERT
// into the table and its indexes, COMMIT) held the event loop: about a tenth of the proxy's
// busy time per request. The thread holds its own connection to the same file and commits whole
// batches: one message per group commit, answered once the transaction committed, so the store
// resolves an append only after its row is durable, exactly as on the main thread. The `sqlite3`
// driver already runs statements on libuv's pool and does not use this.
//
// Started by the first append (a store that is only read never starts it). If it cannot start, the
// batch that started it is refused with AppendThreadUnavailable before anything was sent, so the store
// commits it on the main thread instead. If it fails later, batches in flight reject (their commit is
// unknown: their callers fail closed, and nothing acknowledged is lost). Either way `onError` is told
// once and `retired` turns true: the store appends on the main thread from then on.
import type { Worker } from 'node:worker_threads'
import type { DatabaseOptions } from './sqlite-driver.js'
import { closeWorker, startWorker } from '../worker-threads.js'

/** Main thread → append thread. */
export type AppendRequest = { id: number; rows: readonly (readonly unknown[])[] } | 'close'

/** Append thread → main thread. */
export type AppendAnswer =
  | { ready: true }
  | { ready: false; error: string }
  | { id: number; lastInsertRowid: number }
  | { id: number; error: string }

export interface AppendThread {
  /** Appends the rows in one transaction on the thread; resolves with the last seq once committed. */
  append(rows: readonly (readonly unknown[])[]): Promise<{ lastInsertRowid: number }>
  /** True once the thread failed (or was closed): appends must then be made elsewhere. */
  readonly retired: boolean
  /** Lets the thread finish and close its connection (bounded), then stops it. */
  close(): Promise<void>
}

export interface AppendThreadOptions {
  /** The thread connection's `wal_autocheckpoint` (pages): the store's writer's own setting. */
  walAutocheckpointPages: number
  /** The thread could not start or failed; appends continue on the main thread. */
  onError?: (err: Error) => void
}

const CLOSE_WAIT_MS = 5000

/** The thread is not running (could not start, failed earlier, or closed): nothing of the batch was sent. */
export class AppendThreadUnavailable extends Error {
  constructor(why: string) {
    super(`the receipt append thread is not running (${why})`)
    this.name = 'AppendThreadUnavailable'
  }
}

export function createAppendThread(path: string, database: DatabaseOptions, options: AppendThreadOptions): AppendThread {
  let worker: Promise<Worker> | undefined
  let retired = false
  let nextId = 1
  const waiting = new Map<number, { resolve: (r: { lastInsertRowid: number }) => void; reject: (err: Error) => void }>()

  const retire = (err: Error) => {
    if (retired) return
    retired = true
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
    options.onError?.(err)
  }

  const start = async (): Promise<Worker> => {
    const thread = await startWorker(
      new URL('./append-worker.js', import.meta.url),
      { path, database, walAutocheckpointPages: options.walAutocheckpointPages },
      `the receipt append thread could not open ${path}`,
    )
    thread.on('message', (answer: AppendAnswer) => {
      if (!('id' in answer)) return
      const w = waiting.get(answer.id)
      if (w === undefined) return
      waiting.delete(answer.id)
      if ('error' in answer) w.reject(new Error(answer.error))
      else w.resolve({ lastInsertRowid: answer.lastInsertRowid })
    })
    thread.on('error', err => retire(new Error(`the receipt append thread failed: ${err.message}`)))
    // after close() this is a no-op (already retired)
    thread.on('exit', code => retire(new Error(`the receipt append thread exited with code ${code}`)))
    return thread
  }

  return {
    get retired() {
      return retired
    },
    async append(rows) {
      if (retired) throw new AppendThreadUnavailable('retired')
      worker ??= start()
      let thread: Worker
      try {
        thread = await worker
      } catch (err) {
        retire(err as Error)
        throw new AppendThreadUnavailable((err as Error).message)
      }
      if (retired) throw new AppendThreadUnavailable('retired')
      const id = nextId++
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        thread.postMessage({ id, rows } satisfies AppendRequest)
      })
    },
    async close() {
      if (retired || worker === undefined) {
        retired = true
        return
      }
      const thread = await worker.catch(() => undefined)
      retired = true
      if (thread === undefined) return
      await closeWorker(thread, 'close' satisfies AppendRequest, CLOSE_WAIT_MS)
    },
  }
}
