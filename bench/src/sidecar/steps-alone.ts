// The evaluate path's steps timed alone (cpu-budget.ts): each one many times over by itself, on the
// inputs a real request through the pipeline left behind (pipeline.ts), so its cost with hot caches.
// CPU µs per call from process.cpuUsage(). Also what the receipt writer costs a lone receipt inline
// and through its thread, and the price of a receipt's core form (made on read, never on this path).
import { join } from 'node:path'
import { prepareHttpReceipt, publicKeyFor, readGateHeaders, toCoreReceiptJson, utf8, callerIdentityHash, generateSecret, createSigner, type GateHttpRequest, type HttpReceipt, type HttpReceiptBody } from '@gate/sdk'
import { parseJsonBody } from '@gate/sdk/server'
import { validate } from '@gate/schemas'
import { Kernel, type Evaluation } from '@gate/sidecar'
import { appendRows, createInlineReceiptWriter, createReceiptRow, openDatabase, openStores, closeStores, openTransparencyLogStore, Checkpointer, rowValues, startThreadedReceiptWriter, SERVICE_DEFAULTS } from '@gate/sidecar/testing'
import { mainThreadCpuMicros } from '../proc-stats.js'
import { REQUEST_SCHEMA, type Pipeline, type Scenario, type Step } from './pipeline.js'

const ITERATIONS = Number(process.env.BENCH_STEP_ITERATIONS ?? 20_000)

function cpu(): number {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** CPU µs per call of `fn`, over `n` calls after n/10 warm-up calls. */
export function cpuPerCall(fn: () => unknown, n = ITERATIONS): number {
  for (let i = 0; i < n / 10; i++) fn()
  const start = cpu()
  for (let i = 0; i < n; i++) fn()
  return (cpu() - start) / n
}

/** The same for an asynchronous step, awaited one call at a time. */
export async function cpuPerAsyncCall(fn: () => Promise<unknown>, n = ITERATIONS / 10): Promise<number> {
  for (let i = 0; i < n / 10; i++) await fn()
  const start = cpu()
  for (let i = 0; i < n; i++) await fn()
  return (cpu() - start) / n
}

/** The inputs a request left behind in the pipeline. */
export interface Captured {
  request: GateHttpRequest
  receiptBody: HttpReceiptBody
  evaluation: Evaluation
  guardContext: unknown
}

/** Each step of `scenario` alone (µs of CPU per call); steps not measurable alone are absent. */
export async function stepsAlone(p: Pipeline, scenario: Scenario, captured: Captured): Promise<Partial<Record<Step | 'Kernel.evaluate, receipt write stubbed', number>>> {
  const body = Buffer.from(scenario.body)
  const headers = Object.fromEntries(Object.entries(scenario.headers).map(([k, v]) => [k.toLowerCase(), v]))
  const rawHeaders = Object.entries(scenario.headers).flat()
  const parsed = parseJsonBody(body, { uniqueMembersIn: 'query' })
  const prepared = prepareHttpReceipt(captured.receiptBody, p.signer.publicKey)
  const signingBytes = utf8(prepared.signingInput)
  const signature = p.signer.sign(signingBytes)
  const route = p.kernel.matchRoute(captured.request.method, captured.request.path)
  const stubbed = stubbedKernel(p, captured.evaluation)
  const raw = p.raw
  const gate = readGateHeaders(headers, rawHeaders)
  const input = { request: captured.request, capabilityHeader: gate.capability }
  const out: Partial<Record<Step | 'Kernel.evaluate, receipt write stubbed', number>> = {
    'parse (JSON reader)': cpuPerCall(() => parseJsonBody(body, { uniqueMembersIn: 'query' })),
    'validation (ajv, gate.http.request.v1)': cpuPerCall(() => validate(REQUEST_SCHEMA, parsed.ok ? parsed.value : undefined)),
    'Gate headers': cpuPerCall(() => readGateHeaders(headers, rawHeaders)),
    'route match': cpuPerCall(() => raw.matchRoute(captured.request.method, captured.request.path)),
    'caller identity hash (remembered per identity)': cpuPerCall(() => raw.callerHash(captured.request.caller)),
    guards: await cpuPerAsyncCall(() => raw.guardsRun(captured.guardContext, [])),
    'Kernel.evaluate, receipt write stubbed': await cpuPerAsyncCall(() => stubbed.evaluate(input)),
    'canonical form and id': cpuPerCall(() => prepareHttpReceipt(captured.receiptBody, p.signer.publicKey)),
    'sign (Ed25519)': cpuPerCall(() => p.signer.sign(signingBytes), ITERATIONS / 4),
    'stored row': cpuPerCall(() => {
      const signed = prepared.attach(signature)
      return rowValues(createReceiptRow(signed.receipt, signed.json))
    }),
    metrics: cpuPerCall(() => {
      p.observers.metrics.onDecision(captured.evaluation, route, 0.001)
      p.metrics.recordHttp('/gate/evaluate', 'POST', 200, 0.001)
      p.metrics.recordReceiptWrite(0.001)
    }),
    'decision log line': cpuPerCall(() => p.observers.log.onDecision(captured.evaluation, route, 0.001)),
  }
  const kernelSteps = (['route match', 'caller identity hash (remembered per identity)', 'guards'] as const).reduce((sum, s) => sum + (out[s] ?? 0), 0)
  out['kernel: capability, content hash, receipt body, answer text'] = (out['Kernel.evaluate, receipt write stubbed'] ?? 0) - kernelSteps
  return out
}

// A second kernel over the same stores whose receipt write resolves at once with the captured receipt:
// everything Kernel.evaluate does but sign and commit.
function stubbedKernel(p: Pipeline, evaluation: Evaluation): Kernel {
  const written = { receipt: evaluation.receipt, json: evaluation.receiptJson, seq: 1 }
  const receipts = { ...p.kernel.ports.receipts, write: async () => written }
  return new Kernel({
    signer: p.signer,
    routeTable: p.routeTable,
    policyHash: p.kernel.policyHash,
    ports: { ...p.kernel.ports, receipts },
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: SERVICE_DEFAULTS.approvalTtlSeconds,
    nonceTtlSeconds: SERVICE_DEFAULTS.nonceTtlSeconds,
  })
}

/** Per row of a commit on its own file: one row per transaction, and rows in transactions of 16. */
export async function commitAlone(dir: string, receipt: HttpReceipt, json: string): Promise<{ single: number; grouped: number }> {
  const stores = await openStores({ receiptDb: join(dir, 'commit-alone.db'), derivePublicKey: s => publicKeyFor(s) })
  const db = await openDatabase(stores.paths.receipts)
  try {
    const row = rowValues(createReceiptRow(receipt, json))
    const single = await cpuPerAsyncCall(() => appendRows(db, [row]), 2000)
    const batch = Array.from({ length: 16 }, () => row)
    const grouped = (await cpuPerAsyncCall(() => appendRows(db, batch), 400)) / 16
    return { single, grouped }
  } finally {
    await db.close()
    await closeStores(stores)
  }
}

/** Per receipt, the checkpointer's catch-up over passes of 32 new receipts (the rows appended untimed). */
export async function transparencyAlone(dir: string, receipt: HttpReceipt, json: string): Promise<number> {
  const stores = await openStores({ receiptDb: join(dir, 'tree-alone.db'), derivePublicKey: s => publicKeyFor(s) })
  const db = await openDatabase(stores.paths.receipts)
  const backend = await openTransparencyLogStore(stores.paths.receipts)
  const signer = createSigner({ secret: generateSecret('ed25519') })
  const checkpointer = new Checkpointer({ backend, signer: () => signer, intervalMs: 0, gatherMs: 3_600_000, acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)) })
  try {
    const batch = Array.from({ length: 32 }, () => rowValues(createReceiptRow(receipt, json)))
    let spent = 0
    const passes = 100
    for (let i = 0; i < passes + 10; i++) {
      await appendRows(db, batch)
      const start = cpu()
      await checkpointer.catchUp()
      if (i >= 10) spent += cpu() - start
    }
    return spent / (passes * 32)
  } finally {
    await checkpointer.stop()
    await backend.close()
    await db.close()
    await closeStores(stores)
  }
}

/** A lone receipt written inline and through the writer thread: CPU of the process and of its event loop per write. */
export async function writerAlone(dir: string, body: HttpReceiptBody): Promise<Record<string, { all: number; loop: number | undefined }>> {
  const out: Record<string, { all: number; loop: number | undefined }> = {}
  for (const [k, mode] of (['inline (event loop idle)', 'writer thread (event loop busy)'] as const).entries()) {
    const seed = generateSecret('ed25519')
    const signer = createSigner({ secret: seed })
    const stores = await openStores({ receiptDb: join(dir, `writer-${k}.db`), derivePublicKey: s => publicKeyFor(s) })
    const fallback = createInlineReceiptWriter({ signer: () => signer, log: stores.receipts.log })
    const writer = await startThreadedReceiptWriter({ store: stores.receipts, seed, fallback, log: () => undefined, pressure: () => mode !== 'inline (event loop idle)', mainConnection: stores.receipts.log })
    try {
      const n = 2000
      for (let i = 0; i < 200; i++) await writer.write(body)
      const [all0, loop0] = [cpu(), mainThreadCpuMicros()]
      for (let i = 0; i < n; i++) await writer.write(body)
      const [all1, loop1] = [cpu(), mainThreadCpuMicros()]
      out[mode] = { all: (all1 - all0) / n, loop: loop0 === undefined || loop1 === undefined ? undefined : (loop1 - loop0) / n }
    } finally {
      await writer.close()
      await closeStores(stores)
    }
  }
  return out
}

/** The core form of a receipt (spec 03), made when it is first read through trust-control. */
export function coreFormAlone(receipt: HttpReceipt, p: Pipeline): number {
  return cpuPerCall(() => toCoreReceiptJson(receipt, p.signer), ITERATIONS / 4)
}

/** callerIdentityHash without the kernel's memory (a caller seen for the first time). */
export function callerHashUncached(request: GateHttpRequest): number {
  return cpuPerCall(() => callerIdentityHash(request.caller))
}
