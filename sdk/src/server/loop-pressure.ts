// Whether this thread's event loop is close to saturated, from its utilization (busy time / wall time)
// over the last window. Handing work to another thread pays off only then: on a loaded two-core machine
// a thread hop can cost milliseconds of scheduling delay, far more than the signature it saves. Used by
// the sidecar's signing thread and by the Node SDK core's receipt verification.
import { performance } from 'node:perf_hooks'

/** Options of `createLoopPressure`. */
export interface LoopPressureOptions {
  /** Utilization at or above which the loop counts as saturated, default 0.7. */
  threshold?: number
  /** Length of the measuring window, default 100 ms. */
  windowMs?: number
}

/** Returns a function answering "is the event loop saturated?", re-measured at most once per window. */
export function createLoopPressure(options: LoopPressureOptions = {}): () => boolean {
  const threshold = options.threshold ?? 0.7
  const windowMs = options.windowMs ?? 100
  let last = performance.eventLoopUtilization()
  let lastAt = performance.now()
  let saturated = false
  return () => {
    const now = performance.now()
    if (now - lastAt >= windowMs) {
      const current = performance.eventLoopUtilization()
      saturated = performance.eventLoopUtilization(current, last).utilization >= threshold
      last = current
      lastAt = now
    }
    return saturated
  }
}
