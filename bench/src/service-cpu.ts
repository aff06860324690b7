// The CPU a running service spends per request, by thread (thread-cpu.ts), two ways: one request at a
// time (a client process of its own, sequential-client.ts, a pause after each answer: every request
// wakes the service from sleep) and at saturation (autocannon, 50 connections). Targets are measured
// in interleaved rounds, every other one in reverse order, waiting after each measurement until every
// server is idle; the medians are reported. Used by the sidecar-steps and proxy-steps suites.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runLoad } from './load.js'
import { median } from './measure.js'
import { waitUntilQuiet } from './proc-stats.js'
import { threadCpu, threadCpuPerRequest, type ThreadCpu } from './thread-cpu.js'

const CLIENT = fileURLToPath(new URL('./sequential-client.js', import.meta.url))

/** A running service and the request to send it. */
export interface ServiceTarget {
  name: string
  pid: number
  url: string
  method: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
}

export interface ServiceCpuOptions {
  /** Scratch directory (request bodies for the client). */
  dir: string
  rounds: number
  /** Requests per one-at-a-time measurement. */
  requests: number
  /** Pause after each answer, ms. */
  gapMs: number
  /** Length of a saturation measurement, s (0 skips it). */
  saturationSecs: number
  connections: number
  /** Warm-up per target before the first round, s of saturation. */
  warmupSecs: number
  /** Every server to wait for between measurements (the targets' and any they call). */
  pids: readonly number[]
  log: (line: string) => void
}

export interface ServiceCpu {
  name: string
  /** One at a time: CPU µs per request by thread group, and the latency (ms) the client saw. */
  single: { cpu: ThreadCpu | undefined; p50: number; p99: number }
  /** At saturation: CPU µs per request by thread group, and the rate. */
  saturated: { cpu: ThreadCpu | undefined; rps: number; p99: number } | undefined
}

/** Runs the sequential client once against `target`; resolves with its latency line. */
function sequential(target: ServiceTarget, bodyFile: string, requests: number, gapMs: number): Promise<{ p50: number; p90: number; p99: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, target.url, String(requests), String(gapMs), target.method, bodyFile, JSON.stringify(target.headers ?? {})], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout!.on('data', c => (out += c))
    child.once('exit', code => {
      const m = /latency (\S+) (\S+) (\S+)/.exec(out)
      if (code !== 0 || m === null) reject(new Error(`the sequential client against ${target.name} exited ${code}: ${out}`))
      else resolve({ p50: Number(m[1]), p90: Number(m[2]), p99: Number(m[3]) })
    })
  })
}

function medianCpu(xs: (ThreadCpu | undefined)[]): ThreadCpu | undefined {
  if (xs.some(x => x === undefined)) return undefined
  const all = xs as ThreadCpu[]
  return { main: median(all.map(x => x.main)), writer: median(all.map(x => x.writer)), other: median(all.map(x => x.other)) }
}

/** Measures every target in interleaved rounds; one result per target, in order. */
export async function measureServiceCpu(targets: readonly ServiceTarget[], options: ServiceCpuOptions): Promise<ServiceCpu[]> {
  const bodyFiles = targets.map((t, i) => {
    const file = join(options.dir, `body-${i}.json`)
    writeFileSync(file, t.body ?? '')
    return t.body === undefined ? '-' : file
  })
  const load = (t: ServiceTarget, seconds: number) => runLoad({ url: t.url, method: t.method, body: t.body, headers: t.headers, connections: options.connections, durationSeconds: seconds })
  for (const [i, t] of targets.entries()) {
    await sequential(t, bodyFiles[i]!, Math.max(100, options.requests / 5), 0)
    if (options.warmupSecs > 0) await load(t, options.warmupSecs)
  }
  const quiet = () => waitUntilQuiet(options.pids, { log: options.log })
  await quiet()
  const singles = targets.map(() => [] as { cpu: ThreadCpu | undefined; p50: number; p99: number }[])
  const saturated = targets.map(() => [] as { cpu: ThreadCpu | undefined; rps: number; p99: number }[])
  for (let round = 0; round < options.rounds; round++) {
    const order = [...targets.keys()]
    if (round % 2 === 1) order.reverse()
    for (const i of order) {
      const t = targets[i]!
      const before = threadCpu(t.pid)
      const latency = await sequential(t, bodyFiles[i]!, options.requests, options.gapMs)
      singles[i]!.push({ cpu: threadCpuPerRequest(before, threadCpu(t.pid), options.requests), p50: latency.p50, p99: latency.p99 })
      await quiet()
      if (options.saturationSecs > 0) {
        const start = threadCpu(t.pid)
        const r = await load(t, options.saturationSecs)
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors at saturation`)
        saturated[i]!.push({ cpu: threadCpuPerRequest(start, threadCpu(t.pid), r.requests), rps: r.requestsPerSecond, p99: r.p99Ms })
        await quiet()
      }
    }
  }
  return targets.map((t, i) => ({
    name: t.name,
    single: { cpu: medianCpu(singles[i]!.map(s => s.cpu)), p50: median(singles[i]!.map(s => s.p50)), p99: median(singles[i]!.map(s => s.p99)) },
    saturated: saturated[i]!.length === 0 ? undefined : { cpu: medianCpu(saturated[i]!.map(s => s.cpu)), rps: median(saturated[i]!.map(s => s.rps)), p99: median(saturated[i]!.map(s => s.p99)) },
  }))
}
