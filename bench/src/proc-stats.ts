// Per-process readings from /proc (Linux); each answers undefined elsewhere, and the suites print
// an empty cell then.
import { readFileSync } from 'node:fs'

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

/** Bytes this process caused to be written to storage. */
export function writtenBytes(): number | undefined {
  try {
    const match = /^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}
