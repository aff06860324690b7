// Whether this thread's event loop is close to saturated, from its utilization (busy time / wall time)
// over the last window. Handing work to another thread pays off only then: on a loaded two-core machine
// a thread hop can cost milliseconds of scheduling delay, far more than the work it saves. Used by the
// Node SDK core to verify receipt signatures on the libuv pool while the app's loop is busy.
import { performance } from 'node:perf_hooks'

/** Options of `createLoopPressure`. */
export interface LoopPressureOptions {
  /** Utilization at or above which the loop counts as saturated, default 0.7. */
  threshold?: number
  /** Length of the measuring window, default 100 ms. */
  windowMs?: number
  /** Cumulative milliseconds the loop spent idle and active, default `performance.eventLoopUtilization()` (tests inject their own). */
  readLoop?: () => { idle: number; active: number }
  /** Milliseconds, default `performance.now()`. */
  now?: () => number
}

/** Returns a function answering "is the event loop saturated?", re-measured at most once per window. */
export function createLoopPressure(options: LoopPressureOptions = {}): () => boolean {
  const threshold = options.threshold ?? 0.7
  const windowMs = options.windowMs ?? 100
  const readLoop = options.readLoop ?? (() => performance.eventLoopUtilization())
  const now = options.now ?? (() => performance.now())
  let last = readLoop()
  let lastAt = now()
  let saturated = false
  return () => {
    const at = now()
    if (at - lastAt >= windowMs) {
      const current = readLoop()
      const active = current.active - last.active
      const total = active + current.idle - last.idle
      saturated = total > 0 && active / total >= threshold
      last = current
      lastAt = at
    }
    return saturated
  }
}
