// Timing helpers for benchmarks: operations per second as the median of several timed rounds, so one
// noisy round on a shared machine does not decide the number.

export interface RateOptions {
  /** Length of one round in milliseconds. */
  roundMs?: number
  rounds?: number
}

/** Median ops/s of `fn` over several rounds (after a warm-up round). */
export function measureRate(fn: () => unknown, options: RateOptions = {}): number {
  const roundMs = options.roundMs ?? 300
  const rounds = options.rounds ?? 5
  runFor(fn, roundMs / 2)
  const rates: number[] = []
  for (let i = 0; i < rounds; i++) rates.push(runFor(fn, roundMs))
  return median(rates)
}

/**
 * Median ops/s of several functions measured in interleaved rounds (A, B, C, A, B, C, ...), so a
 * burst of load from another process hits all of them alike; ratios between them stay meaningful.
 */
export function measureRates(fns: (() => unknown)[], options: RateOptions = {}): number[] {
  const roundMs = options.roundMs ?? 200
  const rounds = options.rounds ?? 7
  for (const fn of fns) runFor(fn, roundMs / 2)
  const rates = fns.map(() => [] as number[])
  for (let i = 0; i < rounds; i++) fns.forEach((fn, j) => rates[j]!.push(runFor(fn, roundMs)))
  return rates.map(median)
}

function runFor(fn: () => unknown, ms: number): number {
  let n = 0
  const start = performance.now()
  let now = start
  while (now - start < ms) {
    for (let i = 0; i < 50; i++) fn()
    n += 50
    now = performance.now()
  }
  return (n * 1000) / (now - start)
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** The value at quantile q (0..1) of xs. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}

/** Prints rows as an aligned text table. */
export function printTable(title: string, rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return
  const cols = Object.keys(rows[0]!)
  const cell = (v: string | number) => (typeof v === 'number' ? formatNumber(v) : v)
  const widths = cols.map(c => Math.max(c.length, ...rows.map(r => cell(r[c] ?? '').length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ')
  process.stdout.write(`\n## ${title}\n${line(cols)}\n${line(widths.map(w => '-'.repeat(w)))}\n`)
  for (const r of rows) process.stdout.write(line(cols.map(c => cell(r[c] ?? ''))) + '\n')
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US')
  if (Math.abs(n) >= 1) return n.toFixed(2)
  return n.toPrecision(3)
}

/** Whole microseconds for a table cell; empty where the reading could not be taken. */
export function formatMicros(v: number | undefined): string {
  return v === undefined ? '' : v.toFixed(0)
}

/** The median of `values`, or undefined when any of them is missing (a reading some round could not take). */
export function medianIfAll(values: readonly (number | undefined)[]): number | undefined {
  return values.every(v => v !== undefined) ? median(values as number[]) : undefined
}

/** CPU spent per request (µs) during a load: by the serving process and its main thread (undefined where they could not be read) and by the load generator. */
export interface CpuPerRequest {
  server?: number
  main?: number
  load: number
}

/**
 * The most requests/s `cores` could serve at this CPU per request, with no waiting at all: the rate at
 * which server and load generator together use every core, capped by what the server's main thread
 * (the event loop every request passes through) can do alone. A target above it needs less CPU per
 * request; below it, the gap is waiting (hand-offs, scheduling). Undefined without the server's reading.
 */
export function cpuBoundRate(cpu: CpuPerRequest, cores: number): number | undefined {
  if (cpu.server === undefined) return undefined
  const allCores = (cores * 1e6) / (cpu.server + cpu.load)
  return cpu.main === undefined || cpu.main <= 0 ? allCores : Math.min(allCores, 1e6 / cpu.main)
}
