// CPU time of a process by thread (Linux /proc), grouped by what each thread is: the main thread (its
// event loop), Gate's receipt writer (it names itself `gate-writer`), and everything else (libuv's pool,
// V8's GC and compiler helpers). Elsewhere every reading is undefined and the suites print empty cells.
import { readdirSync, readFileSync } from 'node:fs'
import { cpuMicros } from './proc-stats.js'

/** CPU µs spent so far, by thread group. */
export interface ThreadCpu {
  main: number
  writer: number
  other: number
}

/** The CPU each thread group of process `pid` has spent so far, or undefined when /proc cannot say. */
export function threadCpu(pid: number): ThreadCpu | undefined {
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return undefined
  }
  const out: ThreadCpu = { main: 0, writer: 0, other: 0 }
  for (const tid of tids) {
    const used = cpuMicros(`/proc/${pid}/task/${tid}`)
    if (used === undefined) continue
    if (tid === String(pid)) out.main += used
    else if (threadName(pid, tid) === 'gate-writer') out.writer += used
    else out.other += used
  }
  return out
}

function threadName(pid: number, tid: string): string {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}

/** What each thread group spent between two readings, per request (µs); undefined without both readings. */
export function threadCpuPerRequest(before: ThreadCpu | undefined, after: ThreadCpu | undefined, requests: number): ThreadCpu | undefined {
  if (before === undefined || after === undefined || requests <= 0) return undefined
  return { main: (after.main - before.main) / requests, writer: (after.writer - before.writer) / requests, other: (after.other - before.other) / requests }
}

/** The sum of the groups. */
export function totalCpu(cpu: ThreadCpu): number {
  return cpu.main + cpu.writer + cpu.other
}
