// `gate api protect` throughput and latency, against the same upstream reached directly, through
// nginx proxy_pass, and through @fastify/http-proxy (a no-policy Node proxy), all in one run. Every
// server is its own process on 127.0.0.1; autocannon drives each row from this process for a bounded
// time. Gate runs with a durable receipt store and signs and stores two receipts per request (decision
// and finalized). Targets, against the no-policy Node proxy measured in the same run, per method:
// Gate throughput >= 0.5x and Gate p99 <= 2x. When a Node 24 binary is found or can be installed,
// Gate and @fastify/http-proxy run once more on it (Gate's stores then use `node:sqlite`), and those
// two are compared with each other.
//
// Every row is measured in BENCH_ROUNDS rounds (default 2), the second in reverse order, and reported as
// the median, so drift in the host's load hits every target alike. After each measurement the suite
// waits until all its servers are idle: a Gate built before the receipt writer keeps converting the
// receipts of its last row to their core form for 10 s or more after the load stops, and that must not
// land in another target's row. What the target spends meanwhile is printed per request of its load
// ("CPU after the load"). BENCH_BASELINE_DIR adds an older build's `gate api protect` (baseline.ts).
//
// Run: npx tsc -b bench && node bench/dist/proxy/protect.js   (or `npm run bench -- proxy`).
// BENCH_DURATION_SECS, BENCH_WARMUP_SECS, BENCH_CONNECTIONS and BENCH_ROUNDS override the defaults (5, 8, 50, 2).
// The warm-up is long because a fresh Node process here needs 4–7 s of load to reach its steady rate
// (per-second rates of a fresh @fastify/http-proxy and a fresh Gate, docs/performance.md).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runLoad, type LoadResult } from '../load.js'
import { formatMicros, median, medianIfAll, printTable, type CpuPerRequest } from '../measure.js'
import { baselineGateMain } from '../baseline.js'
import { findOrInstallNode24 } from '../node24.js'
import { cpuPerRequestDuring, cpuPerRequestUntilQuiet, waitUntilQuiet } from '../proc-stats.js'
import { findOrInstallNginx, startNginx } from './nginx.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 8)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const CONTROL_TOKEN = 'bench-control-token'
const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const HERE = fileURLToPath(new URL('.', import.meta.url))

const SPEC = `openapi: 3.1.0
info: { title: bench, version: '1' }
paths:
  /items:
    get:
      operationId: listItems
      responses: { '200': { description: ok } }
    post:
      operationId: createItem
      responses: { '200': { description: ok } }
`
const POST_BODY = JSON.stringify({ name: 'bench item', tags: ['a', 'b'], count: 3 })

interface Child {
  child: ChildProcess
  output: () => string
  stop(): Promise<void>
}

/** Spawns a process and resolves once its stdout matches `ready`. */
async function spawnReady(command: string, args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<Child & { match: RegExpExecArray }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()))
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const check = () => {
      const m = ready.exec(out)
      if (m !== null) {
        child.stdout?.off('data', check)
        resolve(m)
      }
    }
    child.stdout?.on('data', check)
    void exited.then(() => reject(new Error(`${command} ${args.join(' ')} exited before it was ready:\n${out}`)))
  })
  return {
    child,
    match,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** One target and method: medians over the rounds, errors summed. */
interface Row {
  target: string
  method: 'GET' | 'POST'
  rps: number
  p50: number
  p99: number
  /** CPU time of the proxy process per request (user + system), when known. */
  cpuMicrosPerRequest: number | undefined
  /** The same for its main thread (the event loop every request passes through), when known. */
  mainCpuMicrosPerRequest: number | undefined
  /** CPU the proxy process spent after the load until it was idle, per request it served since it was last idle (an older Gate's core-receipt backfill). */
  afterCpuMicrosPerRequest: number | undefined
  non2xx: number
  errors: number
  /** req/s of each round, in round order. */
  rounds: number[]
}

function load(url: string, method: 'GET' | 'POST', headers: Record<string, string>, durationSeconds: number): Promise<LoadResult> {
  return runLoad({
    url,
    connections: CONNECTIONS,
    durationSeconds,
    method,
    headers: method === 'POST' ? { 'content-type': 'application/json', ...headers } : headers,
    body: method === 'POST' ? POST_BODY : undefined,
  })
}

export async function run(): Promise<{ ok: boolean }> {
  const log = (line: string) => process.stdout.write(`bench proxy: ${line}\n`)
  const dir = mkdtempSync(join(tmpdir(), 'gate-bench-proxy-'))
  const stops: (() => Promise<void>)[] = []
  // every server the suite started, for the quiet wait before each measurement
  const pids: number[] = []
  try {
    const upstream = await spawnReady(process.execPath, [join(HERE, 'upstream-server.js')], /listening (\d+)/)
    stops.push(upstream.stop)
    pids.push(upstream.child.pid!)
    const upstreamUrl = `http://127.0.0.1:${upstream.match[1]}`

    writeFileSync(join(dir, 'openapi.yaml'), SPEC)
    const startGate = async (execPath: string, store: string, main = GATE_MAIN) => {
      const gate = await spawnReady(
        execPath,
        [main, 'api', 'protect', '--upstream', upstreamUrl, '--spec', join(dir, 'openapi.yaml'), '--receipt-store', join(dir, store), '--listen', '127.0.0.1:0'],
        /protecting \S+ with \d+ routes on (http:\/\/[^\s"]+)/,
        { ...process.env, GATE_CONTROL_TOKEN: CONTROL_TOKEN },
      )
      stops.push(gate.stop)
      pids.push(gate.child.pid!)
      const url = gate.match[1] as string
      log(gate.output().split('\n').find(l => l.includes('receipts:')) ?? '')
      return { url, token: await issueToken(url), pid: gate.child.pid }
    }
    const startFastify = async (execPath: string) => {
      const fastify = await spawnReady(execPath, [join(HERE, 'fastify-proxy.js'), upstreamUrl], /listening (\d+)/)
      stops.push(fastify.stop)
      pids.push(fastify.child.pid!)
      return { url: `http://127.0.0.1:${fastify.match[1]}`, pid: fastify.child.pid }
    }
    const gate = await startGate(process.execPath, 'receipts.db')
    const fastify = await startFastify(process.execPath)

    const noop = await spawnReady(process.execPath, [join(HERE, 'noop-proxy.js'), upstreamUrl], /listening (\d+)/)
    stops.push(noop.stop)
    pids.push(noop.child.pid!)

    const targets: { name: string; url: string; headers: Record<string, string>; pid: number | undefined }[] = [
      { name: 'direct to upstream (floor)', url: upstreamUrl, headers: {}, pid: upstream.child.pid },
      { name: '@fastify/http-proxy (no policy)', url: fastify.url, headers: {}, pid: fastify.pid },
      { name: '@gate/proxy, no-op evaluator (diagnostic)', url: `http://127.0.0.1:${noop.match[1]}`, headers: {}, pid: noop.child.pid },
    ]
    const nginx = findOrInstallNginx(log)
    if ('path' in nginx) {
      const running = await startNginx(nginx.path, Number(upstream.match[1]))
      stops.push(running.stop)
      targets.push({ name: 'nginx proxy_pass (no policy)', url: running.url, headers: {}, pid: undefined })
    } else {
      log(`skipping the nginx row: ${nginx.skip}`)
    }
    targets.push({ name: 'gate api protect (durable receipts)', url: gate.url, headers: { 'x-gate-capability': gate.token }, pid: gate.pid })
    // BENCH_BASELINE_DIR: an older build's gate beside this one, in the same rounds
    const baseline = baselineGateMain()
    const startBaseline = async (execPath: string, name: string) => {
      if (baseline === undefined) return
      const old = await startGate(execPath, `receipts-baseline-${targets.length}.db`, baseline)
      targets.push({ name: `baseline ${name}`, url: old.url, headers: { 'x-gate-capability': old.token }, pid: old.pid })
    }
    await startBaseline(process.execPath, 'gate api protect (durable receipts)')
    // the pairs compared against the targets: Gate and the no-policy Node proxy on the same runtime
    const pairs: { runtime: string; gate: string; node: string }[] = [{ runtime: `node ${process.version}`, gate: 'gate api protect (durable receipts)', node: '@fastify/http-proxy (no policy)' }]
    const node24 = findOrInstallNode24(log)
    if ('path' in node24) {
      const fastify24 = await startFastify(node24.path)
      const gate24 = await startGate(node24.path, 'receipts-node24.db')
      const suffix = ` on node ${node24.version}`
      targets.push({ name: `@fastify/http-proxy (no policy)${suffix}`, url: fastify24.url, headers: {}, pid: fastify24.pid })
      targets.push({ name: `gate api protect (durable receipts, node:sqlite)${suffix}`, url: gate24.url, headers: { 'x-gate-capability': gate24.token }, pid: gate24.pid })
      await startBaseline(node24.path, `gate api protect (durable receipts, node:sqlite)${suffix}`)
      pairs.push({ runtime: `node ${node24.version}`, gate: `gate api protect (durable receipts, node:sqlite)${suffix}`, node: `@fastify/http-proxy (no policy)${suffix}` })
    } else {
      log(`skipping the Node 24 rows: ${node24.skip}`)
    }

    const rows: Row[] = []
    for (const method of ['GET', 'POST'] as const) {
      const samples = new Map<string, { result: LoadResult; cpu: CpuPerRequest; after: number | undefined }[]>()
      await waitUntilQuiet(pids, { log })
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const warmup = round === 0 ? await load(`${target.url}/items`, method, target.headers, WARMUP_SECS) : undefined
          const { result, cpu } = await cpuPerRequestDuring(target.pid, () => load(`${target.url}/items`, method, target.headers, DURATION_SECS), r => r.requests)
          // the work a target leaves for later is its own cost, and must not land in the next row; per
          // request since the last idle moment, since the warm-up's receipts are converted too
          const served = result.requests + (warmup?.requests ?? 0)
          const after = await cpuPerRequestUntilQuiet(target.pid, pids, served, { log })
          samples.set(target.name, [...(samples.get(target.name) ?? []), { result, cpu, after }])
          log(`${method} ${target.name}, round ${round + 1}: ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms`)
        }
      }
      for (const target of targets) {
        const runs = samples.get(target.name)!
        rows.push({
          target: target.name,
          method,
          rps: median(runs.map(r => r.result.requestsPerSecond)),
          p50: median(runs.map(r => r.result.p50Ms)),
          p99: median(runs.map(r => r.result.p99Ms)),
          cpuMicrosPerRequest: medianIfAll(runs.map(r => r.cpu.server)),
          mainCpuMicrosPerRequest: medianIfAll(runs.map(r => r.cpu.main)),
          afterCpuMicrosPerRequest: medianIfAll(runs.map(r => r.after)),
          non2xx: runs.reduce((n, r) => n + r.result.non2xx, 0),
          errors: runs.reduce((n, r) => n + r.result.errors, 0),
          rounds: runs.map(r => Math.round(r.result.requestsPerSecond)),
        })
      }
    }

    printTable(`proxy: gate api protect vs direct, nginx and @fastify/http-proxy (${CONNECTIONS} connections, medians of ${ROUNDS} rounds of ${DURATION_SECS} s, loopback)`, rows.map(r => ({
      method: r.method,
      target: r.target,
      'req/s': r.rps,
      'req/s per round': r.rounds.join(', '),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'proxy CPU µs/req': formatMicros(r.cpuMicrosPerRequest),
      'main thread µs/req': formatMicros(r.mainCpuMicrosPerRequest),
      'CPU after the load µs/req': formatMicros(r.afterCpuMicrosPerRequest),
      'non-2xx': r.non2xx,
      errors: r.errors,
    })))

    // met when, on some runtime, both methods meet both targets
    let ok = false
    for (const pair of pairs) {
      let pairMet = true
      for (const method of ['GET', 'POST'] as const) {
        const gateRow = rows.find(r => r.method === method && r.target === pair.gate)
        const node = rows.find(r => r.method === method && r.target === pair.node)
        if (gateRow === undefined || node === undefined) {
          pairMet = false
          continue
        }
        const throughput = gateRow.rps / node.rps
        const p99 = gateRow.p99 / Math.max(node.p99, 1)
        const clean = gateRow.non2xx === 0 && gateRow.errors === 0
        const met = throughput >= 0.5 && p99 <= 2 && clean
        pairMet &&= met
        process.stdout.write(
          `${method}, ${pair.runtime}: gate at ${throughput.toFixed(2)}x the no-policy Node proxy's throughput (target >= 0.5x), p99 ${p99.toFixed(2)}x (target <= 2x)` +
            `${clean ? '' : `, ${gateRow.non2xx} non-2xx and ${gateRow.errors} errors`}: ${met ? 'MET' : 'MISSED'}\n`,
        )
        // the build in BENCH_BASELINE_DIR against the same no-policy proxy, for the before/after of issue #42
        const old = rows.find(r => r.method === method && r.target === `baseline ${pair.gate}`)
        if (old !== undefined) {
          process.stdout.write(
            `${method}, ${pair.runtime}: before/after (issue #42): throughput ${(old.rps / node.rps).toFixed(2)}x -> ${throughput.toFixed(2)}x, p99 ${(old.p99 / Math.max(node.p99, 1)).toFixed(2)}x -> ${p99.toFixed(2)}x, ` +
              `proxy CPU ${formatMicros(old.cpuMicrosPerRequest)} -> ${formatMicros(gateRow.cpuMicrosPerRequest)} µs per request (the no-policy proxy ${formatMicros(node.cpuMicrosPerRequest)})\n`,
          )
        }
      }
      ok ||= pairMet
    }
    return { ok }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}

async function issueToken(gateUrl: string): Promise<string> {
  const r = await fetch(`${gateUrl}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: 'cd'.repeat(32), scope: { grants: [{ server_id: 'http', tool_name: 'POST /items' }] }, ttlSeconds: 3600 }),
  })
  if (r.status !== 200) throw new Error(`capability issuance failed: ${r.status} ${await r.text()}`)
  const { capability } = (await r.json()) as { capability: unknown }
  return Buffer.from(JSON.stringify(capability)).toString('base64url')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ok } = await run()
  process.exitCode = ok ? 0 : 1
}
