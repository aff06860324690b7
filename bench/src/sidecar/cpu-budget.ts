// The CPU budget of one evaluation, step by step: `npm run bench -- sidecar-steps` (issue #42). Three
// views, each in CPU time (a busy host moves wall time far more than CPU time):
//   alone     each step many times over by itself on inputs a real request left behind (steps-alone.ts):
//             its cost with hot caches
//   in place  requests one at a time (a client process of its own, 1 ms between requests) through the
//             evaluate path assembled in this process from the service's own modules (pipeline.ts),
//             each step timed where it runs: the median per request
//   whole     real `gate sidecar` processes, CPU per request by thread (event loop, receipt writer,
//             the rest) one request at a time and at 50 connections, beside a bare node:http server
//             answering the same JSON; and each feature's price on the path, the same sidecar with it
//             switched off (transparency log, metrics) or on (the decision log line), in the same rounds
// This process's runtime runs the first two (its SQLite driver: `sqlite3` on Node 20, `node:sqlite` on
// Node 24); the whole view runs on this runtime and on Node 24 (GATE_NODE24, .ci/node24, or installed).
// BENCH_STEP_ITERATIONS (alone, 20,000), BENCH_STEP_REQUESTS (in place and one at a time, 2,000),
// BENCH_ROUNDS (2), BENCH_DURATION_SECS (saturation, 5; 0 skips it) and BENCH_WARMUP_SECS (3) size it.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { createSigner, generateSecret } from '@gate/sdk'
import { PETS_SPEC_YAML } from '@gate/sidecar/testing'
import { median, printTable } from '../measure.js'
import { findOrInstallNode24 } from '../node24.js'
import { measureServiceCpu, type ServiceCpu, type ServiceTarget } from '../service-cpu.js'
import { totalCpu, type ThreadCpu } from '../thread-cpu.js'
import { startPipeline, STEPS, TREE_PASS, type Pipeline, type Scenario, type Step } from './pipeline.js'
import { callerHashUncached, commitAlone, coreFormAlone, stepsAlone, transparencyAlone, writerAlone, type Captured } from './steps-alone.js'

const REQUESTS = Number(process.env.BENCH_STEP_REQUESTS ?? 2000)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const SATURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const FLOOR_MAIN = fileURLToPath(new URL('./floor-server.js', import.meta.url))
const CLIENT = fileURLToPath(new URL('../sequential-client.js', import.meta.url))
const TOKEN = 'bench-control-token-0123456789'
const us = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v < 10 ? v.toFixed(2) : v.toFixed(1))

/** Sends `requests` requests of `scenario` one at a time from a client process; resolves when it is done. */
function sequential(url: string, scenario: Scenario, dir: string, requests: number): Promise<void> {
  const file = join(dir, `${scenario.name.replace(/\W+/g, '-')}.json`)
  writeFileSync(file, scenario.body)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, url, String(requests), '1', 'POST', file, JSON.stringify(scenario.headers)], { stdio: ['ignore', 'ignore', 'inherit'] })
    child.once('exit', code => (code === 0 ? resolve() : reject(new Error(`the sequential client exited ${code}`))))
  })
}

/** Each step in place, one request at a time: the median per request (the tree's passes: the mean). */
async function stepsInPlace(p: Pipeline, scenario: Scenario, dir: string): Promise<{ steps: Record<Step, number>; captured: Captured }> {
  await sequential(p.url, scenario, dir, Math.max(200, REQUESTS / 5))
  p.clock.reset()
  await sequential(p.url, scenario, dir, REQUESTS)
  const steps = Object.fromEntries(
    STEPS.map(s => {
      const xs = p.clock.samples.get(s)!
      return [s, s.startsWith('transparency') ? xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length) : median(xs)]
    }),
  ) as Record<Step, number>
  const { request, receiptBody, evaluation, guardContext } = p.captured
  if (request === undefined || receiptBody === undefined || evaluation === undefined) throw new Error(`no request of ${scenario.name} reached the pipeline`)
  return { steps, captured: { request, receiptBody, evaluation, guardContext } }
}

/**
 * Starts a process with its stdout in a file (`log`) and resolves once it has written "listening on
 * URL" there. Not a pipe to this process: a service's log lines (the decision log) would then cost what
 * draining them costs this busy process, and block the service when it falls behind.
 */
async function startListening(execPath: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: ChildProcess }> {
  const out = openSync(log, 'w')
  const child = spawn(execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, 'inherit'] })
  closeSync(out)
  const watcher = watch(log)
  try {
    return await new Promise((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`${args.join(' ')} exited ${code}: ${readFileSync(log, 'utf8')}`))
      const look = () => {
        const m = /listening on (http:\/\/[^\s"]+)/.exec(readFileSync(log, 'utf8'))
        if (m === null) return
        child.off('exit', exited)
        resolve({ url: m[1]!, child })
      }
      watcher.on('change', look)
      child.once('exit', exited)
      look()
    })
  } finally {
    watcher.close()
  }
}

/** A capability for POST /pets from the sidecar at `url` (its X-Gate-Capability value). */
async function issueCapability(url: string): Promise<string> {
  const issued = await request(`${url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
  })
  const { capability } = (await issued.body.json()) as { capability: unknown }
  return Buffer.from(JSON.stringify(capability)).toString('base64url')
}

const CONFIGS: [string, string[]][] = [
  ['gate sidecar', []],
  ['--no-transparency-log', ['--no-transparency-log']],
  ['--no-metrics', ['--no-metrics']],
  ['--decision-log-level info', ['--decision-log-level', 'info']],
]

/** The whole view on one runtime: the floor, the sidecar per configuration, GET allow (and POST + token on the default). */
async function wholeProcess(execPath: string, runtime: string, dir: string, scenarios: Scenario[]): Promise<ServiceCpu[]> {
  writeFileSync(join(dir, 'pets.yaml'), PETS_SPEC_YAML)
  const children: ChildProcess[] = []
  try {
    const targets: ServiceTarget[] = []
    for (const [name, extra] of CONFIGS) {
      const db = join(dir, `${runtime.replace(/\W+/g, '-')}-${name.replace(/\W+/g, '-')}.db`)
      const gate = await startListening(execPath, [GATE_MAIN, 'sidecar', '--listen', '127.0.0.1:0', '--spec', join(dir, 'pets.yaml'), '--receipt-store', db, ...extra], `${db}.log`, { GATE_CONTROL_TOKEN: TOKEN })
      children.push(gate.child)
      targets.push({ name: `${name}: GET allow`, pid: gate.child.pid!, url: `${gate.url}/gate/evaluate`, method: 'POST', body: scenarios[0]!.body, headers: scenarios[0]!.headers })
      if (extra.length === 0) {
        const capability = await issueCapability(gate.url)
        targets.push({ name: `${name}: POST + valid token`, pid: gate.child.pid!, url: `${gate.url}/gate/evaluate`, method: 'POST', body: scenarios[1]!.body, headers: { ...scenarios[1]!.headers, 'x-gate-capability': capability } })
        const sample = await (await request(`${gate.url}/gate/evaluate`, { method: 'POST', body: scenarios[0]!.body, headers: scenarios[0]!.headers })).body.text()
        const floor = await startListening(execPath, [FLOOR_MAIN, sample], join(dir, `${runtime.replace(/\W+/g, '-')}-floor.log`))
        children.push(floor.child)
        targets.unshift({ name: 'bare node:http, same JSON (floor)', pid: floor.child.pid!, url: `${floor.url}/gate/evaluate`, method: 'POST', body: scenarios[0]!.body, headers: scenarios[0]!.headers })
      }
    }
    return await measureServiceCpu(targets, {
      dir,
      rounds: ROUNDS,
      requests: REQUESTS,
      gapMs: 1,
      saturationSecs: SATURATION_SECS,
      connections: 50,
      warmupSecs: WARMUP_SECS,
      pids: children.map(c => c.pid!),
      log: line => process.stdout.write(`bench sidecar-steps (${runtime}): ${line}\n`),
    })
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map(child => (child.exitCode !== null ? undefined : new Promise(resolve => child.once('exit', resolve)))))
  }
}

const cells = (cpu: ThreadCpu | undefined) => (cpu === undefined ? '' : `${us(totalCpu(cpu))} (${us(cpu.main)} / ${us(cpu.writer)} / ${us(cpu.other)})`)

function printWhole(runtime: string, rows: ServiceCpu[]): void {
  printTable(`the whole process, ${runtime}: CPU µs per request, all threads (event loop / receipt writer / the rest)`, rows.map(r => ({
    target: r.name,
    'one at a time': cells(r.single.cpu),
    'p50 / p99 ms': `${r.single.p50.toFixed(3)} / ${r.single.p99.toFixed(3)}`,
    '50 connections': cells(r.saturated?.cpu),
    'req/s': r.saturated === undefined ? '' : Math.round(r.saturated.rps),
  })))
  const of = (name: string) => rows.find(r => r.name === `${name}: GET allow`)
  const base = of('gate sidecar')
  if (base === undefined) return
  const price = (a: ThreadCpu | undefined, b: ThreadCpu | undefined, sign: number) => {
    if (a === undefined || b === undefined) return ''
    const diff = sign * (totalCpu(a) - totalCpu(b))
    return `${us(diff)} (${((diff / totalCpu(sign > 0 ? a : b)) * 100).toFixed(1)}%)`
  }
  printTable(`each feature's price on the path, ${runtime}, GET allow: CPU µs per request (share of the path)`, [
    ...(['--no-transparency-log', '--no-metrics'] as const).map(flag => {
      const without = of(flag)
      return { feature: flag === '--no-transparency-log' ? 'transparency log (off with --no-transparency-log)' : 'metrics (off with --no-metrics)', 'one at a time': price(base.single.cpu, without?.single.cpu, 1), '50 connections': price(base.saturated?.cpu, without?.saturated?.cpu, 1) }
    }),
    (() => {
      const withLog = of('--decision-log-level info')
      return { feature: 'decision log line (on with --decision-log-level info)', 'one at a time': price(withLog?.single.cpu, base.single.cpu, 1), '50 connections': price(withLog?.saturated?.cpu, base.saturated?.cpu, 1) }
    })(),
  ])
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-sidecar-steps-'))
  const runtime = `node ${process.version} (${process.getBuiltinModule?.('node:sqlite') === undefined ? 'sqlite3' : 'node:sqlite'})`
  try {
    const pipeline = await startPipeline(dir)
    try {
      const inPlace: Record<string, Record<Step, number>> = {}
      const alone: Record<string, Partial<Record<string, number>>> = {}
      let lastCaptured: Captured | undefined
      for (const scenario of pipeline.scenarios) {
        const rounds: Record<Step, number>[] = []
        for (let r = 0; r < ROUNDS; r++) {
          const { steps, captured } = await stepsInPlace(pipeline, scenario, dir)
          rounds.push(steps)
          lastCaptured = captured
        }
        inPlace[scenario.name] = Object.fromEntries(STEPS.map(s => [s, median(rounds.map(x => x[s]))])) as Record<Step, number>
        alone[scenario.name] = await stepsAlone(pipeline, scenario, lastCaptured!)
      }
      const captured = lastCaptured!
      const commit = await commitAlone(dir, captured.evaluation.receipt, captured.evaluation.receiptJson)
      const tree = await transparencyAlone(dir, captured.evaluation.receipt, captured.evaluation.receiptJson)
      for (const name of Object.keys(alone)) {
        alone[name]!['commit (group commit, one row)'] = commit.single
        alone[name]!['transparency append (per receipt, passes of 32)'] = tree
      }
      const [get, post] = pipeline.scenarios.map(s => s.name) as [string, string]
      const sum = (r: Partial<Record<string, number>>) => STEPS.reduce((a, s) => a + (Number.isFinite(r[s]) ? r[s]! : 0), 0)
      printTable(`CPU budget of one evaluation, ${runtime} (µs of CPU; in place: median per request of ${REQUESTS} one at a time, ${ROUNDS} rounds)`, [
        ...STEPS.map(step => ({ step, [`alone, ${get}`]: us(alone[get]![step]), [`in place, ${get}`]: us(inPlace[get]![step]), [`alone, ${post}`]: us(alone[post]![step]), [`in place, ${post}`]: us(inPlace[post]![step]) })),
        { step: 'sum of the steps', [`alone, ${get}`]: us(sum(alone[get]!)), [`in place, ${get}`]: us(sum(inPlace[get]!)), [`alone, ${post}`]: us(sum(alone[post]!)), [`in place, ${post}`]: us(sum(inPlace[post]!)) },
      ])
      process.stdout.write(
        `alone: the commit is one row per transaction on its own file (${us(commit.grouped)} µs per row in transactions of 16); the tree's append is per receipt over passes of ${TREE_PASS}; ` +
          `the kernel's own line is Kernel.evaluate with the receipt write stubbed (${us(alone[get]!['Kernel.evaluate, receipt write stubbed'])} µs for ${get}) less the steps timed inside it. ` +
          `A caller hash not yet remembered: ${us(callerHashUncached(captured.request))} µs. In place, each step's CPU includes ~1 µs of the clock itself.\n`,
      )
      const writer = await writerAlone(dir, captured.receiptBody)
      printTable('a lone receipt through the receipt writer (µs of CPU per write, one at a time)', Object.entries(writer).map(([path, v]) => ({ path, 'all threads': us(v.all), 'event loop': us(v.loop) })))
      process.stdout.write(`the core form of a receipt (spec 03), made when it is first read through trust-control and never on this path: ${us(coreFormAlone(captured.evaluation.receipt, pipeline))} µs\n`)
    } finally {
      await pipeline.close()
    }
    const runtimes: [string, string][] = [[process.execPath, runtime]]
    const node24 = findOrInstallNode24(line => process.stdout.write(`bench sidecar-steps: ${line}\n`))
    if ('path' in node24 && node24.path !== process.execPath && !process.version.startsWith('v24.')) runtimes.push([node24.path, `node ${node24.version} (node:sqlite)`])
    const scenarios = [
      { name: 'GET allow', body: JSON.stringify({ request_id: '0193a0b0-0000-7000-8000-000000000000', method: 'GET', path: '/pets', route_pattern: '/pets', caller: { subject: 'anonymous', auth_method: { method: 'anonymous' } }, timestamp: Math.floor(Date.now() / 1000) }), headers: { 'content-type': 'application/json' } },
      { name: 'POST + valid token', body: JSON.stringify({ request_id: '0193a0b0-0000-7000-8000-000000000000', method: 'POST', path: '/pets', route_pattern: '/pets', caller: { subject: 'anonymous', auth_method: { method: 'anonymous' } }, timestamp: Math.floor(Date.now() / 1000) }), headers: { 'content-type': 'application/json' } },
    ]
    for (const [execPath, label] of runtimes) printWhole(label, await wholeProcess(execPath, label, dir, scenarios))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.stdout.write(`load average ${loadavg().map(l => l.toFixed(1)).join(' ')}\n`)
  // a measurement, not a target
  return { ok: true }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run()
