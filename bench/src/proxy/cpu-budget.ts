// The CPU budget of one proxied request, step by step: `npm run bench -- proxy-steps` (issue #42). As
// sidecar-steps does for an evaluation, in CPU time:
//   alone     the proxy's own steps many times over on the inputs a real request left behind, and one
//             upstream exchange over the proxy's undici pool
//   in place  requests one at a time (a client process of its own, 1 ms apart) through the path of
//             `gate api protect` assembled in this process (pipeline.ts), each step timed where it runs
//   whole     real `gate api protect` processes, CPU per request by thread one at a time and at 50
//             connections, beside the upstream reached directly, @gate/proxy with an evaluator that
//             signs nothing, and @fastify/http-proxy; and each feature's price, the same proxy with it
//             switched off (transparency log, metrics), in the same rounds
// GET and POST /items, both with a capability (as the proxy suite sends them). Sized like sidecar-steps:
// BENCH_STEP_ITERATIONS, BENCH_STEP_REQUESTS, BENCH_ROUNDS, BENCH_DURATION_SECS, BENCH_WARMUP_SECS.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { buildGateHttpRequest, readGateHeaders } from '@gate/sdk'
import { extractCallerIdentity, forwardedHeaders, parseRequestTarget, selectRequestHeaders, selectResponseHeaders } from '@gate/proxy'
import { median, printTable } from '../measure.js'
import { findOrInstallNode24 } from '../node24.js'
import { measureServiceCpu, type ServiceCpu, type ServiceTarget } from '../service-cpu.js'
import { totalCpu, type ThreadCpu } from '../thread-cpu.js'
import { cpuPerAsyncCall, cpuPerCall } from '../sidecar/steps-alone.js'
import { measureLatencyAnatomy } from './latency-anatomy.js'
import { ITEMS_SPEC, PROXY_STEPS, startProxyPipeline, type ProxyPipeline, type ProxyStep } from './pipeline.js'

const REQUESTS = Number(process.env.BENCH_STEP_REQUESTS ?? 2000)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const SATURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const HERE = fileURLToPath(new URL('.', import.meta.url))
const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const CLIENT = fileURLToPath(new URL('../sequential-client.js', import.meta.url))
const CONTROL_TOKEN = 'bench-control-token'
const POST_BODY = JSON.stringify({ name: 'bench item', tags: ['a', 'b'], count: 3 })
const us = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : v < 10 ? v.toFixed(2) : v.toFixed(1))

interface Shape {
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
}

/** Starts a process with its stdout in `log`; resolves once `ready` matches what it wrote there. */
async function startLogged(execPath: string, args: string[], log: string, ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ match: RegExpExecArray; child: ChildProcess }> {
  const out = openSync(log, 'w')
  const child = spawn(execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, 'inherit'] })
  closeSync(out)
  const watcher = watch(log)
  try {
    return await new Promise((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`${args.join(' ')} exited ${code}: ${readFileSync(log, 'utf8')}`))
      const look = () => {
        const m = ready.exec(readFileSync(log, 'utf8'))
        if (m === null) return
        child.off('exit', exited)
        resolve({ match: m, child })
      }
      watcher.on('change', look)
      child.once('exit', exited)
      look()
    })
  } finally {
    watcher.close()
  }
}

function sequential(url: string, shape: Shape, dir: string, requests: number): Promise<void> {
  const file = join(dir, `proxy-${shape.method}.json`)
  writeFileSync(file, shape.body ?? '')
  const headers = shape.body === undefined ? shape.headers : { 'content-type': 'application/json', ...shape.headers }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, url, String(requests), '1', shape.method, shape.body === undefined ? '-' : file, JSON.stringify(headers)], { stdio: ['ignore', 'ignore', 'inherit'] })
    child.once('exit', code => (code === 0 ? resolve() : reject(new Error(`the sequential client exited ${code}`))))
  })
}

async function stepsInPlace(p: ProxyPipeline, shape: Shape, dir: string): Promise<Record<ProxyStep, number>> {
  const url = `${p.url}/items`
  await sequential(url, shape, dir, Math.max(200, REQUESTS / 5))
  p.clock.reset()
  await sequential(url, shape, dir, REQUESTS)
  return Object.fromEntries(
    PROXY_STEPS.map(s => {
      const xs = p.clock.samples.get(s)!
      return [s, s.startsWith('transparency') ? xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length) : median(xs)]
    }),
  ) as Record<ProxyStep, number>
}

/** The proxy's own steps alone, and one upstream exchange over an undici pool. */
async function stepsAlone(p: ProxyPipeline, shape: Shape, upstream: string): Promise<Partial<Record<ProxyStep, number>>> {
  const headers: Record<string, string> = { host: '127.0.0.1:8080', 'user-agent': 'bench', accept: '*/*', ...shape.headers }
  const rawHeaders = Object.entries(headers).flat()
  const req = { socket: { remoteAddress: '127.0.0.1' }, headers } as never
  const body = Buffer.from(shape.body ?? '')
  const decision = p.captured.decision!
  const stubbed = { ...decision }
  const pool = new Pool(upstream, { connections: 1, pipelining: 1 })
  try {
    const exchange = await cpuPerAsyncCall(async () => {
      const res = await pool.request({ path: '/items', method: shape.method, headers: selectRequestHeaders(rawHeaders, undefined), body: shape.body })
      selectResponseHeaders(res.headers)
      await res.body.dump()
    }, 2000)
    return {
      'request: dispatch, target, Gate headers, body read': cpuPerCall(() => {
        const target = parseRequestTarget('/items')
        return readGateHeaders(headers, rawHeaders, target.capability)
      }),
      'route match': cpuPerCall(() => p.kernel.matchRoute(shape.method, '/items')),
      'GateHttpRequest (caller identity, id, body hash)': cpuPerCall(() =>
        buildGateHttpRequest({ method: shape.method, path: '/items', routePattern: '/items', caller: extractCallerIdentity(headers), body: shape.method === 'POST' ? body : Buffer.alloc(0), query: undefined }),
      ),
      'upstream exchange (request headers, undici, the upstream answer head)': exchange + cpuPerCall(() => [...selectRequestHeaders(rawHeaders, undefined), ...forwardedHeaders(req)]),
      'final receipt: the re-signed copy': cpuPerCall(() => {
        const { id: _id, signature: _sig, ...rest } = stubbed.receipt
        return { ...rest, response_status: 200, metadata: { ...(rest.metadata ?? {}), gate_http_status_scope: 'final', gate_decision_receipt_id: stubbed.receipt.id } }
      }),
    }
  } finally {
    await pool.close()
  }
}

const CONFIGS: [string, string[]][] = [
  ['gate api protect', []],
  ['--no-transparency-log', ['--no-transparency-log']],
  ['--no-metrics', ['--no-metrics']],
]

async function issueToken(url: string): Promise<string> {
  const r = await fetch(`${url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: 'cd'.repeat(32), scope: { grants: [{ server_id: 'http', tool_name: 'POST /items' }] }, ttlSeconds: 3600 }),
  })
  const { capability } = (await r.json()) as { capability: unknown }
  return Buffer.from(JSON.stringify(capability)).toString('base64url')
}

async function wholeProcess(execPath: string, runtime: string, dir: string, upstream: string, upstreamPid: number): Promise<ServiceCpu[]> {
  const children: ChildProcess[] = []
  const slug = runtime.replace(/\W+/g, '-')
  try {
    const targets: ServiceTarget[] = [{ name: 'direct to upstream (floor)', pid: upstreamPid, url: `${upstream}/items`, method: 'GET' }]
    const noop = await startLogged(execPath, [join(HERE, 'noop-proxy.js'), upstream], join(dir, `${slug}-noop.log`), /listening (\d+)/)
    children.push(noop.child)
    targets.push({ name: '@gate/proxy, no-op evaluator', pid: noop.child.pid!, url: `http://127.0.0.1:${noop.match[1]}/items`, method: 'GET' })
    const fastify = await startLogged(execPath, [join(HERE, 'fastify-proxy.js'), upstream], join(dir, `${slug}-fastify.log`), /listening (\d+)/)
    children.push(fastify.child)
    targets.push({ name: '@fastify/http-proxy', pid: fastify.child.pid!, url: `http://127.0.0.1:${fastify.match[1]}/items`, method: 'GET' })
    for (const [name, extra] of CONFIGS) {
      const db = join(dir, `${slug}-${name.replace(/\W+/g, '-')}.db`)
      const gate = await startLogged(
        execPath,
        [GATE_MAIN, 'api', 'protect', '--upstream', upstream, '--spec', join(dir, 'items.yaml'), '--receipt-store', db, '--listen', '127.0.0.1:0', ...extra],
        `${db}.log`,
        /protecting \S+ with \d+ routes on (http:\/\/[^\s"]+)/,
        { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
      )
      children.push(gate.child)
      const url = gate.match[1]!
      const capability = await issueToken(url)
      targets.push({ name: `${name}: GET`, pid: gate.child.pid!, url: `${url}/items`, method: 'GET', headers: { 'x-gate-capability': capability } })
      if (extra.length === 0) targets.push({ name: `${name}: POST`, pid: gate.child.pid!, url: `${url}/items`, method: 'POST', body: POST_BODY, headers: { 'content-type': 'application/json', 'x-gate-capability': capability } })
    }
    return await measureServiceCpu(targets, {
      dir,
      rounds: ROUNDS,
      requests: REQUESTS,
      gapMs: 1,
      saturationSecs: SATURATION_SECS,
      connections: 50,
      warmupSecs: WARMUP_SECS,
      pids: [upstreamPid, ...children.map(c => c.pid!)],
      log: line => process.stdout.write(`bench proxy-steps (${runtime}): ${line}\n`),
    })
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map(child => (child.exitCode !== null ? undefined : new Promise(resolve => child.once('exit', resolve)))))
  }
}

const cells = (cpu: ThreadCpu | undefined) => (cpu === undefined ? '' : `${us(totalCpu(cpu))} (${us(cpu.main)} / ${us(cpu.writer)} / ${us(cpu.other)})`)

function printWhole(runtime: string, rows: ServiceCpu[]): void {
  printTable(`the whole process, ${runtime}: CPU µs per proxied request, all threads (event loop / receipt writer / the rest)`, rows.map(r => ({
    target: r.name,
    'one at a time': cells(r.single.cpu),
    'p50 / p99 ms': `${r.single.p50.toFixed(3)} / ${r.single.p99.toFixed(3)}`,
    '50 connections': cells(r.saturated?.cpu),
    'req/s': r.saturated === undefined ? '' : Math.round(r.saturated.rps),
    'p99 ms @50': r.saturated === undefined ? '' : r.saturated.p99,
  })))
  const base = rows.find(r => r.name === 'gate api protect: GET')
  if (base === undefined) return
  const price = (without: ThreadCpu | undefined, withIt: ThreadCpu | undefined) => {
    if (without === undefined || withIt === undefined) return ''
    const diff = totalCpu(withIt) - totalCpu(without)
    return `${us(diff)} (${((diff / totalCpu(withIt)) * 100).toFixed(1)}%)`
  }
  printTable(`each feature's price on the proxied path, ${runtime}, GET: CPU µs per request (share of the path)`, (['--no-transparency-log', '--no-metrics'] as const).map(flag => {
    const without = rows.find(r => r.name === `${flag}: GET`)
    return { feature: flag === '--no-transparency-log' ? 'transparency log' : 'metrics', 'one at a time': price(without?.single.cpu, base.single.cpu), '50 connections': price(without?.saturated?.cpu, base.saturated?.cpu) }
  }))
}

function printAnatomy(runtime: string, a: Awaited<ReturnType<typeof measureLatencyAnatomy>>): void {
  const ms = (v: number) => v.toFixed(2)
  printTable(
    `where a proxied request's time goes at 50 connections, ${runtime} (GET /items with a capability, ${a.requests} requests at ${Math.round(a.rps)} req/s; ` +
      `latency p50 ${ms(a.percentiles.p50)} / p90 ${ms(a.percentiles.p90)} / p99 ${ms(a.percentiles.p99)} / p99.9 ${ms(a.percentiles.p999)} ms): mean ms per phase`,
    (['all', 'median', 'slowest 1%'] as const).map(group => ({
      requests: group === 'median' ? 'around the median (45-55%)' : group,
      ...Object.fromEntries(Object.entries(a.phases[group]).map(([phase, v]) => [phase === 'gcOverlap' ? 'of which GC pauses' : phase, ms(v)])),
    })),
  )
  process.stdout.write(
    `meanwhile: ${a.gc.pauses} GC pauses, ${ms(a.gc.totalMs)} ms in all, the longest ${ms(a.gc.longestMs)} ms; event loop delay p99 ${ms(a.loopDelayP99Ms)} ms; ` +
      `${a.batch.commits} receipt batches committed, ${(a.batch.receipts / Math.max(1, a.batch.commits)).toFixed(1)} receipts each on average ` +
      '(request: arrival to evaluation, the event loop\'s queue included; decision and final: each receipt until durable, signature and group commit; upstream: forwarding to the answer\'s head)\n',
  )
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-proxy-steps-'))
  writeFileSync(join(dir, 'items.yaml'), ITEMS_SPEC)
  const runtime = `node ${process.version} (${process.getBuiltinModule?.('node:sqlite') === undefined ? 'sqlite3' : 'node:sqlite'})`
  const up = await startLogged(process.execPath, [join(HERE, 'upstream-server.js')], join(dir, 'upstream.log'), /listening (\d+)/)
  const upstream = `http://127.0.0.1:${up.match[1]}`
  try {
    const pipeline = await startProxyPipeline(dir, upstream)
    try {
      const shapes: Shape[] = [
        { method: 'GET', headers: { 'x-gate-capability': pipeline.capability } },
        { method: 'POST', headers: { 'x-gate-capability': pipeline.capability }, body: POST_BODY },
      ]
      const inPlace: Record<string, Record<ProxyStep, number>> = {}
      const alone: Record<string, Partial<Record<ProxyStep, number>>> = {}
      for (const shape of shapes) {
        const rounds: Record<ProxyStep, number>[] = []
        for (let r = 0; r < ROUNDS; r++) rounds.push(await stepsInPlace(pipeline, shape, dir))
        inPlace[shape.method] = Object.fromEntries(PROXY_STEPS.map(s => [s, median(rounds.map(x => x[s]))])) as Record<ProxyStep, number>
        alone[shape.method] = await stepsAlone(pipeline, shape, upstream)
      }
      const sum = (r: Partial<Record<ProxyStep, number>>) => PROXY_STEPS.reduce((a, s) => a + (Number.isFinite(r[s]) ? r[s]! : 0), 0)
      printTable(`CPU budget of one proxied request, ${runtime} (µs of CPU; in place: median per request of ${REQUESTS} one at a time, ${ROUNDS} rounds)`, [
        ...PROXY_STEPS.map(step => ({ step, 'alone, GET': us(alone.GET![step]), 'in place, GET': us(inPlace.GET![step]), 'alone, POST': us(alone.POST![step]), 'in place, POST': us(inPlace.POST![step]) })),
        { step: 'sum of the steps', 'alone, GET': '', 'in place, GET': us(sum(inPlace.GET!)), 'alone, POST': '', 'in place, POST': us(sum(inPlace.POST!)) },
      ])
      process.stdout.write(
        'alone: the receipts\' canonical form, signature, row and commit are those of sidecar-steps (one receipt each); the upstream exchange is one request over an undici pool ' +
          'to the same upstream plus the header rules; the proxy\'s request line is the target parse and the Gate headers. In place, each step includes ~1 µs of the clock itself.\n',
      )
    } finally {
      await pipeline.close()
    }
    if (SATURATION_SECS > 0) printAnatomy(runtime, await measureLatencyAnatomy(dir, upstream, SATURATION_SECS, 50))
    const runtimes: [string, string][] = [[process.execPath, runtime]]
    const node24 = findOrInstallNode24(line => process.stdout.write(`bench proxy-steps: ${line}\n`))
    if ('path' in node24 && !process.version.startsWith('v24.')) runtimes.push([node24.path, `node ${node24.version} (node:sqlite)`])
    for (const [execPath, label] of runtimes) printWhole(label, await wholeProcess(execPath, label, dir, upstream, up.child.pid!))
  } finally {
    up.child.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
  process.stdout.write(`load average ${loadavg().map(l => l.toFixed(1)).join(' ')}\n`)
  return { ok: true }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run()
