// Issue #4 benchmark: /gate/evaluate with a durable store (50 connections; a GET allow and a POST with
// a valid token) next to a bare node:http server answering the same JSON, in one run. Prints req/s,
// p50/p99 and the ratio. Targets: >= 5,000 evaluations/s and >= 35% of the bare floor.
// Measured on this machine's Node (stores on the `sqlite3` addon) and, when a Node 24 binary is found or
// can be installed, again on Node 24 (stores on `node:sqlite`); each runtime against its own floor.
// The peer (issue #25's goal: the sidecar at >= 2x its rate) is the Cerbos PDP with the same policy
// (cerbos-peer.ts), driven by the same load generator. BENCH_BASELINE_DIR adds an older build's sidecar
// (baseline.ts), measured in the same rounds, so before and after compare in one run. The transparency
// log's cost (issue #31, goal <= 5% of throughput): the GET allow row again on a sidecar started with
// --no-transparency-log, in the same rounds. The metrics' cost (issue #32, goal <= 3% of throughput): the
// GET allow row once more on a sidecar started with --no-metrics, in the same rounds. Tracing's cost
// (issue #44): the GET allow row with a `traceparent` on a sidecar exporting every span over OTLP/HTTP
// (otlp-sink.ts), in the same rounds; the plain row is tracing off (no OTEL_* set).
// Each scenario is warmed up for 8 s (BENCH_WARMUP_SECS; a fresh Node process here needs several seconds
// of load to reach its steady rate), then measured in two interleaved rounds (BENCH_ROUNDS) of 5 s (BENCH_DURATION_SECS) (median). After each
// measurement the suite waits until the servers are idle, so work a server defers past its row (an older
// build's core-receipt backfill) does not run during the next; what the server spends meanwhile is
// printed per request it served since it was last idle ("CPU after the load").
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { ANONYMOUS_CALLER, createSigner, generateSecret } from '@gate/sdk'
import { PETS_SPEC_YAML } from '@gate/sidecar/testing'
import { runLoad, type LoadResult } from '../load.js'
import { cpuBoundRate, formatMicros, median, medianIfAll, printTable, type CpuPerRequest } from '../measure.js'
import { baselineGateMain } from '../baseline.js'
import { findOrInstallNode24 } from '../node24.js'
import { cpuPerRequestDuring, cpuPerRequestUntilQuiet, waitUntilQuiet } from '../proc-stats.js'
import { cerbosCheckBody, findCerbos, startCerbos } from './cerbos-peer.js'
import { startOtlpSink } from './otlp-sink.js'

const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const FLOOR_MAIN = fileURLToPath(new URL('./floor-server.js', import.meta.url))
const TOKEN = 'bench-control-token-0123456789'
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 8)
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const GET_ALLOW = 'gate sidecar: GET allow'
const GET_ALLOW_NO_LOG = 'gate sidecar, --no-transparency-log: GET allow'
/** Issue #31: the transparency log costs at most 5% of the GET allow throughput. */
const TARGET_LOG_COST = 0.05
const GET_ALLOW_NO_METRICS = 'gate sidecar, --no-metrics: GET allow'
/** Issue #32: Prometheus metrics cost at most 3% of the GET allow throughput. */
const TARGET_METRICS_COST = 0.03
const GET_ALLOW_TRACED = 'gate sidecar, tracing on: GET allow'
/** A caller's trace context, as an app with OpenTelemetry sends it (a sampled parent: every span is exported). */
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

interface Runtime {
  /** Shown in the table, e.g. "node v20.20.2 (sqlite3)". */
  label: string
  execPath: string
}

interface Row {
  runtime: string
  scenario: string
  rps: number
  p50: number
  p99: number
  /** CPU per request (medians of the rounds). */
  cpu: CpuPerRequest
  /** CPU the server spent after the load until it was idle, per request it served since it was last idle (median). */
  after: number | undefined
}

/** Starts a `gate` (or any) process and resolves with the URL of its "listening on" line. */
export function startProcess(execPath: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', c => {
      out += c
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out)
      if (m) resolve({ url: m[1]!, child })
    })
    child.once('exit', code => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)))
  })
}

export function evaluateBody(method: string, path: string): string {
  return JSON.stringify({ request_id: '0193a0b0-0000-7000-8000-000000000000', method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) })
}

type Scenario = [string, (durationSeconds?: number) => Promise<LoadResult>, number]

const JSON_HEADERS = { 'content-type': 'application/json' }

/** A `gate sidecar` of the build at `main` with its own store, and its two scenarios (named with `label`). */
async function startSidecar(
  execPath: string,
  main: string,
  dir: string,
  label: string,
  extraArgs: string[] = [],
  extra: { env?: NodeJS.ProcessEnv; headers?: Record<string, string> } = {},
): Promise<{ child: ChildProcess; url: string; scenarios: Scenario[] }> {
  const gate = await startProcess(execPath, [main, 'sidecar', '--listen', '127.0.0.1:0', '--spec', join(dir, 'pets.yaml'), '--receipt-store', join(dir, `${label.replace(/\W+/g, '-')}.db`), ...extraArgs], {
    ...extra.env,
    GATE_CONTROL_TOKEN: TOKEN,
  })
  const issued = await request(`${gate.url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
  })
  const { capability } = (await issued.body.json()) as { capability: unknown }
  const capabilityHeader = Buffer.from(JSON.stringify(capability)).toString('base64url')
  const evaluate = (method: string, headers: Record<string, string>) => (durationSeconds?: number) =>
    runLoad({ url: `${gate.url}/gate/evaluate`, method: 'POST', body: evaluateBody(method, '/pets'), headers: { ...JSON_HEADERS, ...extra.headers, ...headers }, durationSeconds })
  return {
    ...gate,
    scenarios: [
      [`${label}: GET allow`, evaluate('GET', {}), gate.child.pid!],
      [`${label}: POST + valid token`, evaluate('POST', { 'x-gate-capability': capabilityHeader }), gate.child.pid!],
    ],
  }
}

/** The floor, the sidecar (and a baseline build's) and the Cerbos peer on one runtime, interleaved over two rounds. */
async function measure(runtime: Runtime, baseline: string | undefined, log: (line: string) => void): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-bench-'))
  writeFileSync(join(dir, 'pets.yaml'), PETS_SPEC_YAML)
  const children: ChildProcess[] = []
  let sink: Awaited<ReturnType<typeof startOtlpSink>> | undefined
  try {
    const gate = await startSidecar(runtime.execPath, GATE_MAIN, dir, 'gate sidecar')
    children.push(gate.child)
    const sample = await request(`${gate.url}/gate/evaluate`, { method: 'POST', body: evaluateBody('GET', '/pets'), headers: JSON_HEADERS })
    const floor = await startProcess(runtime.execPath, [FLOOR_MAIN, await sample.body.text()])
    children.push(floor.child)
    const scenarios: Scenario[] = [
      ['bare node:http, same JSON (floor)', durationSeconds => runLoad({ url: `${floor.url}/gate/evaluate`, method: 'POST', body: evaluateBody('GET', '/pets'), headers: JSON_HEADERS, durationSeconds }), floor.child.pid!],
      ...gate.scenarios,
    ]
    // the transparency log's cost (issue #31): the same GET allow on a sidecar without it
    const noLog = await startSidecar(runtime.execPath, GATE_MAIN, dir, 'gate sidecar, --no-transparency-log', ['--no-transparency-log'])
    children.push(noLog.child)
    scenarios.push(noLog.scenarios[0]!)
    // the metrics' cost (issue #32): the same GET allow on a sidecar without them
    const noMetrics = await startSidecar(runtime.execPath, GATE_MAIN, dir, 'gate sidecar, --no-metrics', ['--no-metrics'])
    children.push(noMetrics.child)
    scenarios.push(noMetrics.scenarios[0]!)
    // tracing's cost (issue #44): the same GET allow, traced and every span exported to a sink here
    sink = await startOtlpSink()
    const traced = await startSidecar(runtime.execPath, GATE_MAIN, dir, 'gate sidecar, tracing on', [], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
      headers: { traceparent: TRACEPARENT },
    })
    children.push(traced.child)
    scenarios.push(traced.scenarios[0]!)
    if (baseline !== undefined) {
      const old = await startSidecar(runtime.execPath, baseline, dir, 'baseline gate sidecar')
      children.push(old.child)
      scenarios.push(...old.scenarios)
    }
    const cerbos = findCerbos()
    if ('path' in cerbos) {
      const pdp = await startCerbos(cerbos.path, dir)
      children.push(pdp.child)
      const check = (action: 'GET' | 'POST') => (durationSeconds?: number) => runLoad({ url: `${pdp.url}/api/check/resources`, method: 'POST', body: cerbosCheckBody(action), headers: JSON_HEADERS, durationSeconds })
      for (const action of ['GET', 'POST'] as const) {
        const answer = await (await request(`${pdp.url}/api/check/resources`, { method: 'POST', body: cerbosCheckBody(action), headers: JSON_HEADERS })).body.text()
        if (!answer.includes(`"${action}":"EFFECT_ALLOW"`)) throw new Error(`Cerbos did not allow the bench's ${action}: ${answer}`)
      }
      scenarios.push([CERBOS_GET, check('GET'), pdp.child.pid!], [CERBOS_POST, check('POST'), pdp.child.pid!])
    } else {
      log(`the Cerbos rows are skipped: ${cerbos.skip}`)
    }
    const results = new Map<string, { result: LoadResult; cpu: CpuPerRequest; after: number | undefined }[]>()
    const pids = children.map(child => child.pid!)
    const logFor = (what: string) => (line: string) => process.stdout.write(`bench sidecar: ${what}: ${line}\n`)
    await waitUntilQuiet(pids, { log: logFor(runtime.label) })
    // interleaved rounds, so a burst of outside load hits every row alike
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, fn, pid] of scenarios) {
        const warmup = round === 0 ? await fn(WARMUP_SECS) : undefined
        const measured = await cpuPerRequestDuring(pid, () => fn(DURATION_SECS), r => r.requests)
        const r = measured.result
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${runtime.label} ${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
        // work a server defers past its row (an older build's core-form backfill) is charged to that row, not the next
        const served = r.requests + (warmup?.requests ?? 0)
        const after = await cpuPerRequestUntilQuiet(pid, pids, served, { log: logFor(name) })
        results.set(name, [...(results.get(name) ?? []), { ...measured, after }])
      }
    }
    return scenarios.map(([name]) => {
      const ms = results.get(name)!
      const rs = ms.map(m => m.result)
      return {
        runtime: runtime.label,
        scenario: name,
        rps: median(rs.map(r => r.requestsPerSecond)),
        p50: median(rs.map(r => r.p50Ms)),
        p99: median(rs.map(r => r.p99Ms)),
        cpu: { server: medianIfAll(ms.map(m => m.cpu.server)), main: medianIfAll(ms.map(m => m.cpu.main)), load: median(ms.map(m => m.cpu.load)) },
        after: medianIfAll(ms.map(m => m.after)),
      }
    })
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map(child => (child.exitCode !== null ? undefined : new Promise(resolve => child.once('exit', resolve)))))
    await sink?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const CERBOS_GET = 'Cerbos PDP: GET allow'
const CERBOS_POST = 'Cerbos PDP: POST + principal attribute'

export async function run(): Promise<{ ok: boolean }> {
  const log = (line: string) => process.stdout.write(`bench sidecar: ${line}\n`)
  const baseline = baselineGateMain()
  if (baseline !== undefined) log(`baseline build: ${baseline}`)
  const runtimes: Runtime[] = [{ label: `node ${process.version} (sqlite3)`, execPath: process.execPath }]
  const node24 = findOrInstallNode24(log)
  if ('path' in node24) runtimes.push({ label: `node ${node24.version} (node:sqlite)`, execPath: node24.path })
  else log(`the Node 24 rows are skipped: ${node24.skip}`)
  const rows: Row[] = []
  for (const runtime of runtimes) rows.push(...(await measure(runtime, baseline, log)))
  // each runtime's first row is its floor
  const floorOf = (runtime: string) => rows.find(r => r.runtime === runtime)!.rps
  const ratio = (rps: number, runtime: string) => `${((rps / floorOf(runtime)) * 100).toFixed(0)}%`
  const cores = cpus().length
  printTable(
    'sidecar: /gate/evaluate, 50 connections, durable receipts (issue #4)',
    rows.map(s => {
      const bound = cpuBoundRate(s.cpu, cores)
      return {
        runtime: s.runtime,
        scenario: s.scenario,
        'req/s': s.rps,
        'p50 ms': s.p50,
        'p99 ms': s.p99,
        'vs floor': ratio(s.rps, s.runtime),
        'server CPU µs/req (main thread)': s.cpu.server === undefined ? '' : `${formatMicros(s.cpu.server)} (${formatMicros(s.cpu.main)})`,
        'load generator µs/req': formatMicros(s.cpu.load),
        'CPU after the load µs/req': formatMicros(s.after),
        'CPU bound req/s (vs floor)': bound === undefined ? '' : `${Math.round(bound)} (${ratio(bound, s.runtime)})`,
      }
    }),
  )
  process.stdout.write(
    `CPU bound: the most requests/s this host's ${cores} cores could serve at the CPU per request measured in the row ` +
      '(server and load generator together), and no more than its main thread can serve alone; ' +
      "CPU after the load: what the server spent from the end of the row until it was idle (an older build's core-receipt backfill), " +
      'per request it served since it was last idle, warm-up included; the CPU bound leaves it out, since it waits while requests arrive\n',
  )
  let ok = false
  for (const runtime of runtimes) {
    const of = (scenario: string) => rows.find(r => r.runtime === runtime.label && r.scenario === scenario)
    // tracing is opt-in: its row has its own line below, not these targets
    const gateRows = rows.filter(r => r.runtime === runtime.label && r.scenario.startsWith('gate sidecar') && r.scenario !== GET_ALLOW_TRACED)
    const rate = gateRows.every(s => s.rps >= 5000)
    const ratio = gateRows.every(s => s.rps / floorOf(runtime.label) >= 0.35)
    ok ||= rate && ratio
    process.stdout.write(`${runtime.label}: >= 5,000 evaluations/s ${rate ? 'MET' : 'MISSED'}, >= 35% of the floor ${ratio ? 'MET' : 'MISSED'}\n`)
    const [get, post, cerbosGet, cerbosPost] = [GET_ALLOW, 'gate sidecar: POST + valid token', CERBOS_GET, CERBOS_POST].map(of)
    if (get !== undefined && post !== undefined && cerbosGet !== undefined && cerbosPost !== undefined) {
      const times = [get.rps / cerbosGet.rps, post.rps / cerbosPost.rps]
      process.stdout.write(
        `${runtime.label}: goal (issue #25) sidecar >= 2x the Cerbos PDP: GET ${times[0]!.toFixed(2)}x, POST ${times[1]!.toFixed(2)}x ${times.every(x => x >= 2) ? 'MET' : 'MISSED'}\n`,
      )
      // the build in BENCH_BASELINE_DIR against the same Cerbos rows, for the before/after of issue #42
      const [oldGet, oldPost] = ['baseline gate sidecar: GET allow', 'baseline gate sidecar: POST + valid token'].map(of)
      if (oldGet !== undefined && oldPost !== undefined) {
        const cpu = (r: Row) => (r.cpu.server === undefined ? '?' : formatMicros(r.cpu.server))
        process.stdout.write(
          `${runtime.label}: before/after (issue #42) against the Cerbos PDP: GET ${(oldGet.rps / cerbosGet.rps).toFixed(2)}x -> ${times[0]!.toFixed(2)}x, POST ${(oldPost.rps / cerbosPost.rps).toFixed(2)}x -> ${times[1]!.toFixed(2)}x; ` +
            `CPU per evaluation GET ${cpu(oldGet)} -> ${cpu(get)} µs, POST ${cpu(oldPost)} -> ${cpu(post)} µs; Cerbos GET ${cpu(cerbosGet)} µs, POST ${cpu(cerbosPost)} µs\n`,
        )
      }
    }
  }
  process.stdout.write(`targets (>= 5,000 evaluations/s and >= 35% of the floor, on some runtime): ${ok ? 'MET' : 'MISSED'}\n`)
  for (const runtime of runtimes) {
    const withLog = rows.find(r => r.runtime === runtime.label && r.scenario === GET_ALLOW)!.rps
    const withoutLog = rows.find(r => r.runtime === runtime.label && r.scenario === GET_ALLOW_NO_LOG)!.rps
    const cost = 1 - withLog / withoutLog
    process.stdout.write(
      `${runtime.label}: transparency log cost ${(cost * 100).toFixed(1)}% of GET allow throughput (${Math.round(withLog)} vs ${Math.round(withoutLog)} req/s without it): ` +
        `<= ${TARGET_LOG_COST * 100}% ${cost <= TARGET_LOG_COST ? 'MET' : 'MISSED'}\n`,
    )
    const withoutMetrics = rows.find(r => r.runtime === runtime.label && r.scenario === GET_ALLOW_NO_METRICS)!.rps
    const metricsCost = 1 - withLog / withoutMetrics
    process.stdout.write(
      `${runtime.label}: metrics cost ${(metricsCost * 100).toFixed(1)}% of GET allow throughput (${Math.round(withLog)} vs ${Math.round(withoutMetrics)} req/s with --no-metrics): ` +
        `<= ${TARGET_METRICS_COST * 100}% ${metricsCost <= TARGET_METRICS_COST ? 'MET' : 'MISSED'}\n`,
    )
    const traced = rows.find(r => r.runtime === runtime.label && r.scenario === GET_ALLOW_TRACED)!
    process.stdout.write(
      `${runtime.label}: tracing on costs ${((1 - traced.rps / withLog) * 100).toFixed(1)}% of GET allow throughput (${Math.round(traced.rps)} vs ${Math.round(withLog)} req/s off), ` +
        `p50 ${traced.p50} vs ${rows.find(r => r.runtime === runtime.label && r.scenario === GET_ALLOW)!.p50} ms; off, the path is the untraced route (no OTel code runs)\n`,
    )
  }
  return { ok }
}
