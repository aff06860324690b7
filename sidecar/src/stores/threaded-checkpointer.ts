// The event loop's side of the transparency checkpointer hosted on the receipt writer thread
// (hosted-checkpointer.ts): what the transparency log asks of a checkpointer (its last failure, a
// flush, a stop), answered by messages to that thread; and, once the thread is gone, by a checkpointer
// started here instead (`local`), so the log keeps growing whatever happens to the thread.
import { FlushTimeoutError } from '../errors.js'
import type { CheckpointResult } from '../transparency/checkpointer.js'
import type { CheckpointerControl, HostedCheckpointerSettings } from '../transparency/checkpointer-control.js'

/** The requests the event loop sends the thread about its checkpointer. */
export type CheckpointerRequest =
  | { control: 'startCheckpointer'; settings: HostedCheckpointerSettings }
  | { control: 'createCheckpoint' }
  | { control: 'stopCheckpointer' }

export interface ThreadedCheckpointerOptions {
  /** Sends a request to the thread; resolves with its answer (rejects when the thread fails it or is gone). */
  call: (request: CheckpointerRequest) => Promise<unknown>
  /** Commits what the receipt writer holds (inline and on the thread). */
  flushWriter: () => Promise<void>
  /** A checkpointer on this event loop, started when the thread is gone. */
  local: () => CheckpointerControl
}

export interface ThreadedCheckpointer extends CheckpointerControl {
  /** The thread said how its checkpointer's last pass went: the failure's message, or null. */
  reportError(message: string | null): void
  /** The thread stopped: from now on a checkpointer on this event loop does the work. */
  threadGone(): void
}

export function createThreadedCheckpointer(options: ThreadedCheckpointerOptions): ThreadedCheckpointer {
  let local: CheckpointerControl | undefined
  let lastError: Error | undefined
  let stopped = false
  return {
    get lastError() {
      return local !== undefined ? local.lastError : lastError
    },
    reportError(message) {
      lastError = message === null ? undefined : new Error(message)
    },
    threadGone() {
      if (!stopped) local ??= options.local()
    },
    async flush(timeoutMs) {
      if (local !== undefined) return local.flush(timeoutMs)
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new FlushTimeoutError(timeoutMs)), timeoutMs)
      })
      try {
        return await Promise.race([options.flushWriter().then(() => options.call({ control: 'createCheckpoint' }) as Promise<CheckpointResult>), timeout])
      } catch (err) {
        // the thread went away meanwhile: the checkpointer that took over does it
        const takenOver = local as CheckpointerControl | undefined
        if (takenOver !== undefined && !(err instanceof FlushTimeoutError)) return takenOver.flush(timeoutMs)
        throw err
      } finally {
        clearTimeout(timer)
      }
    },
    async stop() {
      stopped = true
      if (local !== undefined) return local.stop()
      await options.call({ control: 'stopCheckpointer' }).catch(() => undefined)
    },
  }
}
