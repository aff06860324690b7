// Issue #4 benchmark: /gate/evaluate with a durable store (50 connections; a GET allow and a POST with
// a valid token) next to a bare node:http server answering the same JSON, in one run. Prints req/s,
// p50/p99 and the ratio. Targets: >= 5,000 evaluations/s and >= 35% of the bare floor.
// Measured on this machine's Node (stores on the `sqlite3` addon) and, when a Node 24 binary is found or
// can be installed, again on Node 24 (stores on `node:sqlite`); each runtime against its own floor.
// The transparency log's cost (issue #31, goal <= 5% of throughput): the GET allow row is measured again
// against a second sidecar started with --no-transparency-log, in the same interleaved rounds.
// Each scenario is warmed up for 8 s (BENCH_WARMUP_SECS; a fresh Node process here needs several seconds
// of load to reach its steady rate), then measured in two interleaved rounds (BENCH_ROUNDS) of 5 s
// (BENCH_DURATION_SECS) (median). After each
// measurement the suite waits until the sidecar and the floor server are idle, so the sidecar's
// core-receipt backfill after one scenario does not run during the next; what the server spends
// meanwhile is printed per request it served since it was last idle ("CPU after the load").
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
import { findOrInstallNode24 } from '../node24.js'
import { cpuPerRequestDuring, cpuPerRequestUntilQuiet, waitUntilQuiet } from '../proc-stats.js'

const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const FLOOR_MAIN = fileURLToPath(new URL('./floor-server.js', import.meta.url))
const TOKEN = 'bench-control-token-0123456789'
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 8)
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const GET_ALLOW = 'gate sidecar: GET allow'
const GET_ALLOW_NO_LOG = 'gate sidecar: GET allow, --no-transparency-log'
/** Issue #31: the transparency log costs at most 5% of the GET allow throughput. */
const TARGET_LOG_COST = 0.05

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

function startProcess(execPath: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', c => {
      out += c
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve({ url: m[1]!, child })
    })
    child.once('exit', code => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)))
  })
}

function evaluateBody(method: string, path: string): string {
  return JSON.stringify({ request_id: '0193a0b0-0000-7000-8000-000000000000', method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) })
}

/** The floor and both sidecar scenarios on one runtime, interleaved over two rounds. */
async function measure(runtime: Runtime): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-bench-'))
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const gate = await startProcess(runtime.execPath, [GATE_MAIN, 'sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', join(dir, 'receipts.db')], { GATE_CONTROL_TOKEN: TOKEN })
  const noLog = await startProcess(runtime.execPath, [GATE_MAIN, 'sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', join(dir, 'no-log.db'), '--no-transparency-log'], { GATE_CONTROL_TOKEN: TOKEN })
  try {
    const issued = await request(`${gate.url}/v1/capabilities/issue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
    })
    const { capability } = (await issued.body.json()) as { capability: unknown }
    const capabilityHeader = Buffer.from(JSON.stringify(capability)).toString('base64url')
    const sample = await request(`${gate.url}/gate/evaluate`, { method: 'POST', body: evaluateBody('GET', '/pets'), headers: { 'content-type': 'application/json' } })
    const floor = await startProcess(runtime.execPath, [FLOOR_MAIN, await sample.body.text()])
    try {
      const json = { 'content-type': 'application/json' }
      const scenarios: [string, (durationSeconds?: number) => Promise<LoadResult>, number][] = [
        ['bare node:http, same JSON (floor)', durationSeconds => runLoad({ url: `${floor.url}/gate/evaluate`, method: 'POST', body: evaluateBody('GET', '/pets'), headers: json, durationSeconds }), floor.child.pid!],
        [GET_ALLOW, durationSeconds => runLoad({ url: `${gate.url}/gate/evaluate`, method: 'POST', body: evaluateBody('GET', '/pets'), headers: json, durationSeconds }), gate.child.pid!],
        [GET_ALLOW_NO_LOG, durationSeconds => runLoad({ url: `${noLog.url}/gate/evaluate`, method: 'POST', body: evaluateBody('GET', '/pets'), headers: json, durationSeconds }), noLog.child.pid!],
        [
          'gate sidecar: POST + valid token',
          durationSeconds =>
            runLoad({ url: `${gate.url}/gate/evaluate`, method: 'POST', body: evaluateBody('POST', '/pets'), headers: { ...json, 'x-gate-capability': capabilityHeader }, durationSeconds }),
          gate.child.pid!,
        ],
      ]
      const results = new Map<string, { result: LoadResult; cpu: CpuPerRequest; after: number | undefined }[]>()
      const pids = [gate.child.pid!, noLog.child.pid!, floor.child.pid!]
      const logFor = (what: string) => (line: string) => process.stdout.write(`bench sidecar: ${what}: ${line}\n`)
      await waitUntilQuiet(pids, { log: logFor(runtime.label) })
      // interleaved rounds, so a burst of outside load hits every row alike
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, fn, pid] of scenarios) {
          const warmup = round === 0 ? await fn(WARMUP_SECS) : undefined
          const measured = await cpuPerRequestDuring(pid, () => fn(DURATION_SECS), r => r.requests)
          const r = measured.result
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${runtime.label} ${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
          // the row's backlog (its receipts' core form) is charged to it and kept out of the next row
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
      floor.child.kill('SIGTERM')
    }
  } finally {
    for (const service of [gate, noLog]) {
      service.child.kill('SIGTERM')
      await new Promise(resolve => service.child.once('exit', resolve))
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function run(): Promise<{ ok: boolean }> {
  const runtimes: Runtime[] = [{ label: `node ${process.version} (sqlite3)`, execPath: process.execPath }]
  const node24 = findOrInstallNode24(line => process.stdout.write(`bench sidecar: ${line}\n`))
  if ('path' in node24) runtimes.push({ label: `node ${node24.version} (node:sqlite)`, execPath: node24.path })
  else process.stdout.write(`bench sidecar: the Node 24 rows are skipped: ${node24.skip}\n`)
  const rows: Row[] = []
  for (const runtime of runtimes) rows.push(...(await measure(runtime)))
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
      'CPU after the load: what the server spent from the end of the row until it was idle (the core form of its receipts), ' +
      'per request it served since it was last idle, warm-up included; the CPU bound leaves it out, since it waits while requests arrive\n',
  )
  let ok = false
  for (const runtime of runtimes) {
    const gateRows = rows.filter(r => r.runtime === runtime.label && r.scenario !== GET_ALLOW_NO_LOG).slice(1)
    const rate = gateRows.every(s => s.rps >= 5000)
    const ratio = gateRows.every(s => s.rps / floorOf(runtime.label) >= 0.35)
    ok ||= rate && ratio
    process.stdout.write(`${runtime.label}: >= 5,000 evaluations/s ${rate ? 'MET' : 'MISSED'}, >= 35% of the floor ${ratio ? 'MET' : 'MISSED'}\n`)
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
  }
  return { ok }
}
