// A stopwatch of CPU time for the budgets in place (sidecar-steps, proxy-steps): each step of a request
// adds what the process spent while it ran (process.cpuUsage: every thread, so libuv's share of an
// sqlite3 commit or an upstream exchange counts too), and each request's totals become one sample per
// step. Requests are sent one at a time, so nothing else of this process runs meanwhile.
export class CpuClock<S extends string> {
  readonly #steps: readonly S[]
  readonly #current = new Map<S, number>()
  readonly samples: Map<S, number[]>

  constructor(steps: readonly S[]) {
    this.#steps = steps
    this.samples = new Map(steps.map(s => [s, []]))
  }

  now(): number {
    const u = process.cpuUsage()
    return u.user + u.system
  }

  /** Adds what was spent since `since` (a `now()`) to `step`; returns now. */
  time(step: S, since: number): number {
    const now = this.now()
    this.add(step, now - since)
    return now
  }

  add(step: S, micros: number): void {
    this.#current.set(step, (this.#current.get(step) ?? 0) + micros)
  }

  /** What the current request has spent so far in `steps`. */
  spentIn(steps: readonly S[]): number {
    let sum = 0
    for (const step of steps) sum += this.#current.get(step) ?? 0
    return sum
  }

  /** Ends one request: each step's total becomes one sample (0 for a step it did not meet). */
  endRequest(): void {
    for (const step of this.#steps) this.samples.get(step)!.push(this.#current.get(step) ?? 0)
    this.#current.clear()
  }

  reset(): void {
    for (const xs of this.samples.values()) xs.length = 0
    this.#current.clear()
  }
}
