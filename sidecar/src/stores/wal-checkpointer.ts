// Checkpoints a store's write-ahead log from a thread of its own. SQLite's automatic checkpoint runs
// inside the commit that takes the WAL past `wal_autocheckpoint` pages: it syncs the WAL, copies it into
// the database file and syncs that, all on the writer's thread. On node:sqlite that thread is the event
// loop, which then stands still for tens of milliseconds. Here a worker with its own connection runs a
// PASSIVE checkpoint (it never waits for or blocks the writer) shortly after commits and syncs what it
// copied. The writer keeps its automatic checkpoint as a backstop further out: under steady writes a
// checkpoint from another connection never quite reaches the end of the WAL, so the WAL restarts only
// when the writer checkpoints, and by then almost everything was copied and synced. Durability never
// depends on this thread (a commit is durable in the WAL); if it fails, the writer's checkpoints remain.
import { closeSync, openSync } from 'node:fs'
import type { Worker } from 'node:worker_threads'
import type { DatabaseOptions } from './sqlite-driver.js'
import { closeWorker, startWorker } from '../worker-threads.js'

/** What the main thread asks the checkpoint thread; `dbFd` first, the descriptor to sync the database file through. */
export type CheckpointRequest = { dbFd: number } | 'checkpoint' | 'close'

/** What the checkpoint thread answers: ready after opening, then one answer per checkpoint. */
export type CheckpointAnswer =
  | { ok: true; ready: true }
  | { ok: true; busy: boolean; log: number; checkpointed: number }
  | { ok: false; error: string }

/** Counters for tests and diagnostics. */
export interface CheckpointStats {
  /** Checkpoints run. */
  runs: number
  /** Runs that found another checkpoint in progress (the writer's own). */
  busy: number
  /** Frames in the WAL at the last run (it restarts from 0 after the writer's checkpoint). */
  walFrames: number
  /** Of those, frames already copied into the database file. */
  framesCopied: number
}

export interface WalCheckpointer {
  /** Something was committed: checkpoint within `intervalMs` (one run at a time; calls in between coalesce). */
  notify(): void
  readonly stats: Readonly<CheckpointStats>
  /** Waits for a run in flight, then stops the thread. */
  close(): Promise<void>
  /**
   * Closes the descriptor the thread synced the database file through. Call it only after every SQLite
   * connection of this store to the file is closed: closing any descriptor of a file drops all of the
   * process's POSIX locks on it, SQLite's included.
   */
  releaseFile(): void
}

export interface WalCheckpointerOptions {
  /** Delay between a commit and the checkpoint it asks for, default 200 ms: one run covers many commits. */
  intervalMs?: number
  /** Called once when the thread fails; checkpoints then stop and the writer's automatic ones remain. */
  onError?: (err: Error) => void
}

export const WAL_CHECKPOINT_INTERVAL_MS = 200
const CLOSE_WAIT_MS = 5000

/**
 * The checkpoint thread for the database at `path`, started by the first `notify()`: a store that is
 * only read (a `gate receipt` command) never starts it. A thread that cannot start is reported through
 * `onError`, like one that fails later.
 */
export function createWalCheckpointer(path: string, database: DatabaseOptions, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const intervalMs = options.intervalMs ?? WAL_CHECKPOINT_INTERVAL_MS
  const stats: CheckpointStats = { runs: 0, busy: 0, walFrames: 0, framesCopied: 0 }
  let thread: Promise<Worker | undefined> | undefined
  // the descriptor the thread syncs through, until released
  let dbFd: number | undefined
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> | undefined
  let again = false
  let stopped = false
  let settle: ((answer: CheckpointAnswer) => void) | undefined

  const stop = (err: Error | undefined) => {
    if (stopped) return
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    settle?.({ ok: false, error: err?.message ?? 'stopped' })
    if (err !== undefined) options.onError?.(err)
  }

  const startThread = async (): Promise<Worker> => {
    const worker = await startWorker(
      new URL('./wal-checkpoint-worker.js', import.meta.url),
      { path, options: database },
      `the WAL checkpoint thread could not open ${path}`,
    )
    // Opened here, not on the thread: Node closes the descriptors a worker opened when it exits, and
    // that must not happen while this store's connections still hold their locks on the file.
    try {
      dbFd = openSync(path, 'r')
    } catch (err) {
      await worker.terminate()
      throw err
    }
    worker.postMessage({ dbFd } satisfies CheckpointRequest)
    worker.on('message', (answer: CheckpointAnswer) => settle?.(answer))
    worker.on('error', err => stop(new Error(`the WAL checkpoint thread failed: ${err.message}`)))
    worker.on('exit', code => stop(code === 0 ? undefined : new Error(`the WAL checkpoint thread exited with code ${code}`)))
    return worker
  }

  const checkpoint = async (): Promise<void> => {
    thread ??= startThread().catch(err => {
      stop(err as Error)
      return undefined
    })
    const worker = await thread
    if (worker === undefined || stopped) return
    const answer = await new Promise<CheckpointAnswer>(resolve => {
      settle = resolve
      worker.postMessage('checkpoint' satisfies CheckpointRequest)
    })
    settle = undefined
    if (answer.ok && 'log' in answer) {
      stats.runs++
      if (answer.busy) stats.busy++
      stats.walFrames = Math.max(answer.log, 0)
      stats.framesCopied = Math.max(answer.checkpointed, 0)
    } else if (!answer.ok && !stopped) {
      stop(new Error(`a WAL checkpoint failed: ${answer.error}`))
    }
  }

  const run = () => {
    timer = undefined
    if (stopped) return
    inFlight = checkpoint().then(() => {
      inFlight = undefined
      if (again && !stopped) {
        again = false
        timer = setTimeout(run, intervalMs).unref()
      }
    })
  }

  return {
    notify() {
      if (stopped) return
      if (inFlight !== undefined) again = true
      else if (timer === undefined) timer = setTimeout(run, intervalMs).unref()
    },
    get stats() {
      return { ...stats }
    },
    async close() {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      again = false
      await inFlight
      const wasStopped = stopped
      stopped = true
      const worker = thread === undefined ? undefined : await thread
      if (worker === undefined || wasStopped) return void (await worker?.terminate())
      await closeWorker(worker, 'close' satisfies CheckpointRequest, CLOSE_WAIT_MS)
    },
    releaseFile() {
      if (dbFd === undefined) return
      closeSync(dbFd)
      dbFd = undefined
    },
  }
}
