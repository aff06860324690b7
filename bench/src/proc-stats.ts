// Per-process readings from /proc (Linux); each answers undefined elsewhere, and the suites print
// an empty cell then.
import { readFileSync } from 'node:fs'
import type { CpuPerRequest } from './measure.js'

/** CPU time (user + system, µs, 10 ms resolution) of a process, or of one thread: `/proc/PID/task/TID`. */
export function cpuMicros(procPath: string): number | undefined {
  try {
    const stat = readFileSync(`${procPath}/stat`, 'utf8')
    // after the command name, which may hold spaces: fields[11] and [12] are utime and stime
    // (fields 14 and 15 of proc(5)), in clock ticks (100/s)
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return undefined
  }
}

/** CPU time of this process's main thread (its event loop). */
export function mainThreadCpuMicros(): number | undefined {
  return cpuMicros(`/proc/self/task/${process.pid}`)
}

/** Runs `load` and divides the CPU spent meanwhile by process `pid`, its main thread and this process by the requests it made. */
export async function cpuPerRequestDuring<T>(pid: number | undefined, load: () => Promise<T>, requestsOf: (result: T) => number): Promise<{ result: T; cpu: CpuPerRequest }> {
  const server = () => (pid === undefined ? undefined : cpuMicros(`/proc/${pid}`))
  const main = () => (pid === undefined ? undefined : cpuMicros(`/proc/${pid}/task/${pid}`))
  const [server0, main0, load0] = [server(), main(), process.cpuUsage()]
  const result = await load()
  const [server1, main1, load1] = [server(), main(), process.cpuUsage(load0)]
  const requests = Math.max(1, requestsOf(result))
  const per = (before: number | undefined, after: number | undefined) => (before === undefined || after === undefined ? undefined : (after - before) / requests)
  return { result, cpu: { server: per(server0, server1), main: per(main0, main1), load: (load1.user + load1.system) / requests } }
}

/** Bytes this process caused to be written to storage. */
export function writtenBytes(): number | undefined {
  try {
    const match = /^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/** Options of `waitUntilQuiet`. */
export interface QuietOptions {
  /** Length of one sample, default 250 ms. */
  windowMs?: number
  /** Quiet means the processes together used at most this share of one core over a window, default 0.05. */
  maxShare?: number
  /**
   * Quiet must last this long without a busy window in between, default 2000 ms. One quiet window is not
   * enough: a Gate built before the receipt writer (a BENCH_BASELINE_DIR baseline) waits 250 ms after its
   * last commit before its core-receipt backfill starts (its
   * `gatherMs`), so the window right after a row often looks idle and the backfill then ran during the
   * next rows, measured in the bench of 2026-11-25 at 7–14 s of conversion landing on the next targets.
   * Nor is 1 s: the backfill also waits until its event loop was under 10% busy over a 500 ms window,
   * which can hold it back about a second after the load, and in one sidecar run the wait ended first.
   */
  quietForMs?: number
  /** Give up after this long, default 60 s. */
  timeoutMs?: number
  /** Told when the wait took over 2 s or the processes stayed busy (the measurement then goes ahead anyway). */
  log?: (line: string) => void
}

/**
 * Waits until the processes `pids` are idle together (background work such as an older Gate's
 * core-receipt backfill after an earlier row has finished), so the next row measures a machine they do
 * not share.
 * Resolves how long it waited and whether they went quiet; processes that are gone count as idle.
 */
export async function waitUntilQuiet(pids: readonly number[], options: QuietOptions = {}): Promise<{ waitedMs: number; quiet: boolean }> {
  const windowMs = options.windowMs ?? 250
  const maxShare = options.maxShare ?? 0.05
  const quietForMs = options.quietForMs ?? 2000
  const timeoutMs = options.timeoutMs ?? 60_000
  const total = () => pids.reduce((sum, pid) => sum + (cpuMicros(`/proc/${pid}`) ?? 0), 0)
  const start = performance.now()
  let quietSince: number | undefined
  for (;;) {
    const before = total()
    const windowStart = performance.now()
    await new Promise(resolve => setTimeout(resolve, windowMs))
    const now = performance.now()
    // judged against the time that really passed: on a busy host the timer fires late
    const used = total() - before
    const idle = used <= maxShare * (now - windowStart) * 1000
    quietSince = idle ? (quietSince ?? windowStart) : undefined
    const waitedMs = now - start
    const quiet = quietSince !== undefined && now - quietSince >= quietForMs
    if (quiet || waitedMs >= timeoutMs) {
      if (!quiet || waitedMs > 2000) options.log?.(`waited ${(waitedMs / 1000).toFixed(1)} s for the servers to go idle${quiet ? '' : ' (they did not; measuring anyway)'}`)
      return { waitedMs, quiet }
    }
  }
}

/**
 * Waits until the processes `pids` are idle (as `waitUntilQuiet`) and divides what process `pid` spent
 * meanwhile by `served`, the requests it answered since it was last idle: the work a target leaves for
 * after its load (a Gate's core-receipt backfill) is its own cost per request, and waiting after the row
 * keeps it out of the next one.
 */
export async function cpuPerRequestUntilQuiet(pid: number | undefined, pids: readonly number[], served: number, options: QuietOptions = {}): Promise<number | undefined> {
  return (await cpuPerRequestDuring(pid, () => waitUntilQuiet(pids, options), () => served)).cpu.server
}
