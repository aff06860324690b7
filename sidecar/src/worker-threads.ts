// Starting and stopping the sidecar's worker thread (the receipt writer, stores/threaded-receipt-writer.ts):
// the flags it starts with, its ready handshake, its name, and a bounded close.
import { writeFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'

/**
 * Names the calling thread for the operating system (Linux: `top -H`, /proc/PID/task/TID/comm), at most
 * 15 bytes, so its CPU can be told from the event loop's and libuv's; elsewhere it does nothing.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15))
  } catch {
    // not Linux, or /proc not mounted: the name is a convenience
  }
}

// The Node flags a worker thread of the sidecar starts with: the process's own (a heap limit, or
// --experimental-sqlite on a Node 22 that needs it, must reach the thread too) less the ones that only
// say how the main script was given. A process started as `node --input-type=module -e …` (the store
// tests' child writers do) would otherwise hand `--input-type` to a worker started from a file, which
// Node refuses.
const WITH_VALUE = new Set(['-e', '--eval', '-p', '--print', '--input-type'])

export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  return withoutFlags(execArgv, flag => WITH_VALUE.has(flag) || /^--(?:input-type|eval|print)=/.test(flag), flag => WITH_VALUE.has(flag))
}

/** `execArgv` less the flags `drop` names, each with the next word when `takesValue` says it is the flag's value. */
function withoutFlags(execArgv: readonly string[], drop: (flag: string) => boolean, takesValue: (flag: string, next: string | undefined) => boolean): string[] {
  const kept: string[] = []
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!
    if (!drop(flag)) kept.push(flag)
    else if (takesValue(flag, execArgv[i + 1])) i++ // and its value
  }
  return kept
}

// Node refuses a worker whose execArgv holds a flag that only a process can take (--v8-pool-size,
// --single-threaded-gc, --title…): such a flag already applies to the whole process, threads included,
// so the thread starts without the flags Node names (listed after the colon of its error, comma-separated).
// Each attempt drops at least one flag, so this ends.
function newWorker(url: URL, workerData: unknown): Worker {
  let execArgv = workerExecArgv()
  for (;;) {
    try {
      return new Worker(url, { workerData, execArgv })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err
      const message = (err as Error).message
      const refused = new Set(message.slice(message.lastIndexOf(': ') + 2).split(', '))
      // a refused flag given as two words goes with its value
      const kept = withoutFlags(execArgv, flag => refused.has(flag), (flag, next) => !flag.includes('=') && next !== undefined && !next.startsWith('-'))
      if (kept.length === execArgv.length) throw err
      execArgv = kept
    }
  }
}

/** A sidecar thread's first message: ready for work, or why it cannot start (other members allowed). */
export type ThreadReady = { ready: true } | { ready: false; error: string }

/**
 * Starts the worker at `url` and waits for its first message. Resolves with the worker, unref'd (it
 * never keeps the process alive by itself), when that message says `ready: true`; otherwise, or when
 * the thread fails or exits first, terminates it and rejects with `${what}: ` and the reason (the
 * `error` the thread sent, or how it ended).
 */
export async function startWorker(url: URL, workerData: unknown, what: string): Promise<Worker> {
  let reason: string
  let worker: Worker
  try {
    worker = newWorker(url, workerData)
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`, { cause: err })
  }
  // ref'd until the first message, so a caller awaiting the start is never left with an unsettled promise
  try {
    const first = await new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', code => reject(new Error(`the thread exited with code ${code}`)))
    })
    if ((first as Partial<ThreadReady> | null)?.ready === true) {
      worker.unref()
      return worker
    }
    const said = (first as { error?: unknown } | null)?.error
    reason = typeof said === 'string' ? said : 'unexpected answer'
  } catch (err) {
    reason = (err as Error).message
  }
  await worker.terminate()
  throw new Error(`${what}: ${reason}`)
}

/**
 * Sends `message` (the thread's own "finish and close" request), waits at most `waitMs` for the thread
 * to exit by itself, then terminates it. The thread is ref'd meanwhile, so a caller awaiting this is
 * never left with an unsettled promise by an event loop that ran out of other work.
 */
export async function closeWorker(worker: Worker, message: unknown, waitMs = 5000): Promise<void> {
  worker.ref()
  const exited = new Promise<void>(resolve => worker.once('exit', () => resolve()))
  worker.postMessage(message)
  let deadline: NodeJS.Timeout | undefined
  await Promise.race([exited, new Promise(resolve => (deadline = setTimeout(resolve, waitMs)))])
  clearTimeout(deadline)
  await worker.terminate()
}
