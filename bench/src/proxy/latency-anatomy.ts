// Where a proxied request's time goes at 50 connections, and what the slowest 1% wait for (proxy-steps):
// `gate api protect`'s path assembled in this process as the service assembles it (the threaded receipt
// writer with its inline path, the transparency log on the writer thread, metrics and the decision
// observer), loaded by autocannon from a process of its own. Each request is followed through its phases
// (AsyncLocalStorage carries its record into the evaluator, the decision to the finalize):
//   request   arrival to the evaluation's start: dispatch, body, route, GateHttpRequest, and the event
//             loop's queue in front of them
//   decision  the kernel and the decision receipt's write (signature and group commit, on the thread or
//             inline), until durable
//   upstream  forwarding and the upstream answer's head
//   final     the finalized receipt's write, until durable
//   answer    head, body relay, end
// and the garbage collector's pauses that overlap each request are counted (PerformanceObserver 'gc').
import { AsyncLocalStorage } from 'node:async_hooks'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createSigner, generateSecret, publicKeyFor, sha256Hex, signCapability } from '@gate/sdk'
import { createProxy } from '@gate/proxy'
import { Kernel, routeTableFromSpec, type Evaluation, type RouteMatch } from '@gate/sidecar'
import {
  Checkpointer,
  closeStores,
  createDecisionObserver,
  createGateLogger,
  createGateMetrics,
  createGateServer,
  createInlineReceiptWriter,
  instrumentReceiptWriter,
  observeProxy,
  openStores,
  openTransparencyLogStore,
  Router,
  SERVICE_DEFAULTS,
  startThreadedReceiptWriter,
} from '@gate/sidecar/testing'
import { median, quantile } from '../measure.js'
import { ITEMS_SPEC } from './pipeline.js'

const LOAD = fileURLToPath(new URL('../load-process.js', import.meta.url))
const PHASES = ['request', 'decision', 'upstream', 'final', 'answer'] as const
type Phase = (typeof PHASES)[number]

interface RequestRecord {
  t0: number
  marks: number[]
  end: number
}

export interface LatencyAnatomy {
  requests: number
  rps: number
  percentiles: { p50: number; p90: number; p99: number; p999: number }
  /** Mean ms per phase, for all requests, those around the median, and the slowest 1%. */
  phases: Record<'all' | 'median' | 'slowest 1%', Record<Phase, number> & { gcOverlap: number }>
  gc: { pauses: number; totalMs: number; longestMs: number }
  loopDelayP99Ms: number
  batch: { commits: number; receipts: number }
}

/** Runs `seconds` of GET /items with a capability at `connections` through the assembled proxy. */
export async function measureLatencyAnatomy(dir: string, upstream: string, seconds: number, connections: number): Promise<LatencyAnatomy> {
  const seed = generateSecret('ed25519')
  const signer = createSigner({ secret: seed })
  const stores = await openStores({ receiptDb: join(dir, 'anatomy.db'), derivePublicKey: s => publicKeyFor(s) })
  const inline = createInlineReceiptWriter({ signer: () => signer, log: stores.receipts.log })
  const threaded = await startThreadedReceiptWriter({ store: stores.receipts, seed, fallback: inline, log: () => undefined, mainConnection: stores.receipts.log })
  const metrics = createGateMetrics({ service: 'bench', version: '0' })
  const writer = instrumentReceiptWriter(threaded, metrics)
  const backend = await openTransparencyLogStore(stores.paths.receipts)
  const local = () => {
    const checkpointer = new Checkpointer({ backend, signer: () => signer, flushReceipts: () => writer.flush(), acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)) })
    writer.onCommitted(batch => checkpointer.onCommitted(batch))
    checkpointer.start()
    return checkpointer
  }
  const checkpoints = await writer.startCheckpointer!({ everyReceipts: 1000, intervalMs: 30_000 }, local, { acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)) })
  const kernel = new Kernel({
    signer,
    routeTable: routeTableFromSpec(ITEMS_SPEC),
    policyHash: sha256Hex(ITEMS_SPEC),
    ports: { receipts: writer, revocations: stores.revocations, budgets: stores.budgets, capabilities: stores.capabilities, approvals: stores.approvals, nonces: stores.nonces },
    observer: createDecisionObserver({ metrics, logger: createGateLogger('bench', 'info'), decisionLevel: 'debug' }),
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: SERVICE_DEFAULTS.approvalTtlSeconds,
    nonceTtlSeconds: SERVICE_DEFAULTS.nonceTtlSeconds,
  })
  const current = new AsyncLocalStorage<RequestRecord>()
  // the upstream's answer arrives in the upstream socket's context: the finalize finds its record by the decision
  const byDecision = new WeakMap<Evaluation, RequestRecord>()
  const mark = (record: RequestRecord | undefined) => record?.marks.push(performance.now())
  const proxy = createProxy<Evaluation, RouteMatch>(
    {
      matchRoute: (method, path) => kernel.matchRoute(method, path),
      async evaluate(input) {
        const record = current.getStore()
        mark(record)
        const evaluation = await kernel.evaluate(input)
        mark(record)
        if (record !== undefined) byDecision.set(evaluation, record)
        return evaluation
      },
      async finalize(decision, status) {
        const record = byDecision.get(decision)
        mark(record)
        const written = await kernel.finalize(decision, status)
        mark(record)
        return written
      },
    },
    { upstream },
  )
  const server = createGateServer({ router: new Router(), fallback: observeProxy(metrics, (req, res) => proxy.handle(req, res)) })
  const [handler] = server.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
  server.server.removeAllListeners('request')
  const records: RequestRecord[] = []
  let recording = false
  server.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const record: RequestRecord = { t0: performance.now(), marks: [], end: 0 }
    res.on('close', () => {
      record.end = performance.now()
      if (recording && record.marks.length === 4) records.push(record)
    })
    current.run(record, () => handler!(req, res))
  })
  const address = await server.listen('127.0.0.1', 0)
  const now = Math.floor(Date.now() / 1000)
  const token = signCapability({ id: 'anatomy', subject: createSigner({ secret: generateSecret('ed25519') }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /items' }] }, issued_at: now - 10, expires_at: now + 3600 }, signer)
  const headers = { 'x-gate-capability': Buffer.from(JSON.stringify(token)).toString('base64url') }
  const load = (secs: number) =>
    new Promise<{ requestsPerSecond: number }>((resolve, reject) => {
      const child = spawn(process.execPath, [LOAD, `http://127.0.0.1:${address.port}/items`, String(secs), String(connections), 'GET', '', JSON.stringify(headers)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout!.on('data', c => (out += c))
      child.once('exit', code => (code === 0 ? resolve(JSON.parse(out) as { requestsPerSecond: number }) : reject(new Error(`load exited ${code}`))))
    })
  const gcs: { start: number; end: number }[] = []
  const observer = new PerformanceObserver(list => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration })
  })
  const delay = monitorEventLoopDelay({ resolution: 10 })
  try {
    await load(Math.max(2, Math.round(seconds / 2)))
    observer.observe({ entryTypes: ['gc'] })
    delay.enable()
    recording = true
    const from = performance.now()
    const result = await load(seconds)
    recording = false
    const to = performance.now()
    delay.disable()
    observer.disconnect()
    const inWindow = gcs.filter(g => g.start >= from && g.end <= to)
    const total = (r: RequestRecord) => r.end - r.t0
    const sorted = [...records].sort((a, b) => total(a) - total(b))
    const phasesOf = (r: RequestRecord): number[] => {
      const [a, b, c, d] = r.marks as [number, number, number, number]
      return [a - r.t0, b - a, c - b, d - c, r.end - d]
    }
    const gcOverlap = (r: RequestRecord) => inWindow.reduce((sum, g) => sum + Math.max(0, Math.min(g.end, r.end) - Math.max(g.start, r.t0)), 0)
    const summarize = (rs: RequestRecord[]) => {
      const out = Object.fromEntries(PHASES.map((p, i) => [p, rs.reduce((s, r) => s + phasesOf(r)[i]!, 0) / Math.max(1, rs.length)])) as Record<Phase, number> & { gcOverlap: number }
      out.gcOverlap = rs.reduce((s, r) => s + gcOverlap(r), 0) / Math.max(1, rs.length)
      return out
    }
    const n = sorted.length
    const totals = sorted.map(total)
    const committed = await metrics.registry.getSingleMetric('gate_receipt_commit_batch_size')!.get()
    const value = (name: string) => committed.values.find(v => (v as { metricName?: string }).metricName === name)?.value ?? 0
    return {
      requests: n,
      rps: result.requestsPerSecond,
      percentiles: { p50: median(totals), p90: quantile(totals, 0.9), p99: quantile(totals, 0.99), p999: quantile(totals, 0.999) },
      phases: {
        all: summarize(sorted),
        median: summarize(sorted.slice(Math.floor(n * 0.45), Math.ceil(n * 0.55))),
        'slowest 1%': summarize(sorted.slice(Math.floor(n * 0.99))),
      },
      gc: { pauses: inWindow.length, totalMs: inWindow.reduce((s, g) => s + g.end - g.start, 0), longestMs: inWindow.reduce((m, g) => Math.max(m, g.end - g.start), 0) },
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      batch: { commits: value('gate_receipt_commit_batch_size_count'), receipts: value('gate_receipt_commit_batch_size_sum') },
    }
  } finally {
    await server.drain(1000)
    await proxy.close()
    await checkpoints.stop()
    await writer.close()
    await backend.close()
    await closeStores(stores)
  }
}
