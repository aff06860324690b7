// What the host was doing while a suite ran, read from /proc/stat (Linux; elsewhere nothing is said).
// These VMs share their cores: "steal" is time the hypervisor gave to someone else, so a suite that ran
// with high steal measured a slower machine than one that ran without, and its ratios move with it.
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'

interface CpuTimes {
  idle: number
  steal: number
  total: number
}

/** The host's cumulative CPU times, or undefined where /proc/stat is unavailable. */
export function readCpuTimes(): CpuTimes | undefined {
  let line: string | undefined
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
  } catch {
    return undefined
  }
  return parseCpuLine(line)
}

/** Parses the aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal …. */
export function parseCpuLine(line: string | undefined): CpuTimes | undefined {
  const fields = line?.trim().split(/\s+/) ?? []
  if (fields[0] !== 'cpu' || fields.length < 9) return undefined
  const ticks = fields.slice(1).map(Number)
  if (ticks.some(n => !Number.isFinite(n))) return undefined
  // guest time is already counted in user time
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0)
  return { idle: ticks[3]! + ticks[4]!, steal: ticks[7]!, total }
}

/** One line on the interval between two readings: busy and stolen share of all cores. */
export function describeHostLoad(before: CpuTimes | undefined, after: CpuTimes | undefined, cores = cpus().length): string | undefined {
  if (before === undefined || after === undefined) return undefined
  const elapsed = after.total - before.total
  if (elapsed <= 0) return undefined
  const pct = (n: number) => `${Math.round((100 * n) / elapsed)}%`
  const busy = elapsed - (after.idle - before.idle) - (after.steal - before.steal)
  return `host during this suite: ${cores} cores, busy ${pct(busy)}, stolen by the hypervisor ${pct(after.steal - before.steal)}, idle ${pct(after.idle - before.idle)}`
}
