// SDK middleware overhead: an Express app and a Fastify app, each without and with Gate in front of the
// same handler, against the real `gate sidecar` with a durable receipt store. Measured at a fixed
// 1,000 req/s (latency added by Gate: median and p99, target <= 0.5 ms and <= 2 ms) and at saturation
// (throughput ratio with/without). Loopback only; the apps and the sidecar run in their own processes.
// The fixed rate is open-loop and evenly paced (paced-load.ts: autocannon's `overallRate` sends each
// second's share in a burst at saturation); saturation uses autocannon.
// On a shared machine wall-clock latency moves with everything else running, so the app's CPU time per
// request (with and without Gate) is reported too, and the load average is printed with the table.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { uuidv7 } from '@gate/sdk'
import { startSidecarProcess } from '@gate/sdk/middleware-testing'
import { runLoad } from '../load.js'
import { median, printTable, quantile } from '../measure.js'
import { pacedLoad } from '../paced-load.js'

const FIXED_RATE = 1000
// a light load as well: the latency Gate adds when neither the app nor the sidecar queues (context, no target)
const LIGHT_RATE = 200
const FIXED_SECONDS = 5
const FIXED_ROUNDS = 2
const SATURATION_SECONDS = 5
const SATURATION_CONNECTIONS = 16
const TARGET_MEDIAN_ADDED_MS = 0.5
const TARGET_P99_ADDED_MS = 2

interface Load {
  latencies: number[]
  requestsPerSecond: number
  failures: number
}

/** Evenly paced load at `rate` (latency at a fixed load). */
async function paced(url: string, options: { rate: number; seconds: number; post?: boolean }): Promise<Load> {
  const r = await pacedLoad({
    origin: url,
    rate: options.rate,
    seconds: options.seconds,
    ...(options.post === true
      ? { path: '/gate/evaluate', method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: () => JSON.stringify(evaluateBody()) }
      : { path: '/pets' }),
  })
  return { latencies: r.latencies, requestsPerSecond: r.achievedRate, failures: r.failures }
}

/** Closed-loop load (saturation): requests per second and failures. */
async function saturate(url: string): Promise<{ requestsPerSecond: number; failures: number }> {
  const r = await runLoad({ url: `${url}/pets`, connections: SATURATION_CONNECTIONS, durationSeconds: SATURATION_SECONDS })
  return { requestsPerSecond: r.requestsPerSecond, failures: r.errors + r.non2xx }
}

interface App {
  url: string
  child: ChildProcess
  /** CPU microseconds and requests served so far, read from the app process. */
  stats(): Promise<{ cpuMicros: number; served: number }>
}

async function startApp(framework: string, gate: 'on' | 'off', sidecarUrl: string): Promise<App> {
  const script = fileURLToPath(new URL('./overhead-app.js', import.meta.url))
  const child = spawn(process.execPath, [script, framework, gate, sidecarUrl], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  let waiting: ((line: string) => void) | undefined
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8')
    const m = /stats (\d+) (\d+)\n/.exec(out)
    if (m !== null && waiting !== undefined) {
      out = out.slice((m.index ?? 0) + m[0].length)
      waiting(m[0])
    }
  })
  const port = await new Promise<string>((resolve, reject) => {
    const poll = () => {
      const m = /listening (\d+)/.exec(out)
      if (m !== null) resolve(m[1] as string)
      else setTimeout(poll, 10)
    }
    poll()
    child.once('exit', code => reject(new Error(`overhead-app ${framework} ${gate} exited with ${code}`)))
  })
  const stats = async () => {
    const line = await new Promise<string>(resolve => {
      waiting = resolve
      child.kill('SIGUSR2')
    })
    const [, cpu, served] = line.trim().split(' ')
    return { cpuMicros: Number(cpu), served: Number(served) }
  }
  return { url: `http://127.0.0.1:${port}`, child, stats }
}

function evaluateBody() {
  const caller = { subject: 'anonymous', auth_method: { method: 'anonymous' }, verified: false, tenant: null, agent_id: null }
  return { request_id: uuidv7(), method: 'GET', route_pattern: '/pets', path: '/pets', caller, body_hash: null, body_length: 0, timestamp: Math.floor(Date.now() / 1000) }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-sdk-bench-'))
  const sidecar = await startSidecarProcess({ dir })
  const rows: Record<string, string | number>[] = []
  let ok = true
  try {
    // the sidecar alone, asked directly at the same rate: the floor under any latency Gate can add
    await paced(sidecar.url, { rate: FIXED_RATE, seconds: 2, post: true })
    const direct = await paced(sidecar.url, { rate: FIXED_RATE, seconds: FIXED_SECONDS, post: true })
    const directLight = await paced(sidecar.url, { rate: LIGHT_RATE, seconds: FIXED_SECONDS, post: true })
    for (const framework of ['express', 'fastify']) {
      const bare = await startApp(framework, 'off', sidecar.url)
      const gated = await startApp(framework, 'on', sidecar.url)
      try {
        // warm-up: JIT, keep-alive pools, the sidecar key fetch
        for (const app of [bare, gated]) await paced(app.url, { rate: FIXED_RATE, seconds: 2 })
        const fixed = { bare: [] as number[], gated: [] as number[] }
        const before = { bare: await bare.stats(), gated: await gated.stats() }
        let failures = 0
        // interleaved rounds, so a burst of load from elsewhere hits both alike
        for (let round = 0; round < FIXED_ROUNDS; round++) {
          for (const [name, app] of [['bare', bare], ['gated', gated]] as const) {
            const r = await paced(app.url, { rate: FIXED_RATE, seconds: FIXED_SECONDS })
            fixed[name].push(...r.latencies)
            failures += r.failures
          }
        }
        const after = { bare: await bare.stats(), gated: await gated.stats() }
        const lightBare = await paced(bare.url, { rate: LIGHT_RATE, seconds: FIXED_SECONDS })
        const lightGated = await paced(gated.url, { rate: LIGHT_RATE, seconds: FIXED_SECONDS })
        const light = { bare: lightBare.latencies, gated: lightGated.latencies }
        const cpuPerRequest = (name: 'bare' | 'gated') => (after[name].cpuMicros - before[name].cpuMicros) / (after[name].served - before[name].served)
        const satBare = await saturate(bare.url)
        const satGated = await saturate(gated.url)
        failures += satBare.failures + satGated.failures + lightBare.failures + lightGated.failures

        const medianAdded = median(fixed.gated) - median(fixed.bare)
        const p99Added = quantile(fixed.gated, 0.99) - quantile(fixed.bare, 0.99)
        const met = medianAdded <= TARGET_MEDIAN_ADDED_MS && p99Added <= TARGET_P99_ADDED_MS && failures === 0
        ok &&= met
        rows.push({
          framework,
          'median bare ms': median(fixed.bare),
          'median gate ms': median(fixed.gated),
          'median added ms': medianAdded,
          'p99 bare ms': quantile(fixed.bare, 0.99),
          'p99 gate ms': quantile(fixed.gated, 0.99),
          'p99 added ms': p99Added,
          [`median added ms @${LIGHT_RATE}/s`]: median(light.gated) - median(light.bare),
          [`p99 added ms @${LIGHT_RATE}/s`]: quantile(light.gated, 0.99) - quantile(light.bare, 0.99),
          'app CPU µs/req bare': cpuPerRequest('bare'),
          'app CPU µs/req gate': cpuPerRequest('gated'),
          'sat req/s bare': satBare.requestsPerSecond,
          'sat req/s gate': satGated.requestsPerSecond,
          'throughput ratio': `${((satGated.requestsPerSecond / satBare.requestsPerSecond) * 100).toFixed(0)}%`,
          failures,
          target: met ? 'met' : 'MISSED',
        })
      } finally {
        await stop(bare.child)
        await stop(gated.child)
      }
    }
    rows.push({
      framework: 'sidecar alone',
      'median gate ms': median(direct.latencies),
      'p99 gate ms': quantile(direct.latencies, 0.99),
      [`median added ms @${LIGHT_RATE}/s`]: median(directLight.latencies),
      [`p99 added ms @${LIGHT_RATE}/s`]: quantile(directLight.latencies, 0.99),
      failures: direct.failures + directLight.failures,
      target: 'floor: POST /gate/evaluate asked directly',
    })
  } finally {
    await sidecar.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  printTable(
    `load average ${loadavg().map(l => l.toFixed(1)).join(' ')} on this machine; SDK middleware overhead: GET /pets at ${FIXED_RATE} req/s (${FIXED_ROUNDS}x${FIXED_SECONDS}s each, evenly paced), at ${LIGHT_RATE} req/s and at saturation (${SATURATION_CONNECTIONS} connections, ${SATURATION_SECONDS}s); durable sidecar; targets: median added <= ${TARGET_MEDIAN_ADDED_MS} ms, p99 added <= ${TARGET_P99_ADDED_MS} ms`,
    rows,
  )
  return { ok }
}

// `node bench/dist/sdk/middleware-overhead.js` runs it alone
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ok } = await run()
  process.exitCode = ok ? 0 : 1
}
