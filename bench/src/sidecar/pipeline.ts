// The sidecar's evaluate path assembled in this process from the modules the service runs, with a
// stopwatch at each step, for the CPU budget (cpu-budget.ts): the HTTP layer (createGateServer, the
// router), the route's steps (body read, parse, validation, Gate headers), the kernel (route match,
// caller hash and guards timed through the instance's own methods), the receipt write as the inline
// writer does it (canonical form and id, signature, row, commit through the receipt log's group commit),
// the observers (metrics, decision log line) and the answer. A lone request takes exactly this path in
// `gate sidecar` (the writer commits inline while the event loop is idle). Every step is timed in CPU
// (process.cpuUsage: all threads, so libuv's share of an sqlite3 commit counts too).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { pino } from 'pino'
import {
  ANONYMOUS_CALLER,
  createSigner,
  generateSecret,
  prepareHttpReceipt,
  publicKeyFor,
  readGateHeaders,
  sha256Hex,
  signCapability,
  utf8,
  type GateHttpRequest,
  type HttpReceiptBody,
  type Signer,
} from '@gate/sdk'
import { parseJsonBody, readBody, sendJsonText } from '@gate/sdk/server'
import { CpuClock as Clock } from '../cpu-clock.js'
import { validate } from '@gate/schemas'
import { Kernel, routeTableFromSpec, type Evaluation, type RouteTable } from '@gate/sidecar'
import {
  createControlAuth,
  createDecisionObserver,
  createGateLogger,
  createGateMetrics,
  createGateServer,
  createReceiptRow,
  createRouteObserver,
  EVALUATE_BODY_LIMIT,
  openStores,
  openTransparencyLogStore,
  Checkpointer,
  closeStores,
  PETS_SPEC_YAML,
  Router,
  SERVICE_DEFAULTS,
  type GateMetrics,
  type KernelObserver,
  type ReceiptWriter,
  type Stores,
} from '@gate/sidecar/testing'

export const REQUEST_SCHEMA = 'gate.http.request.v1'

/** Receipts per transparency pass in place (the service gathers 100 ms of commits per pass). */
export const TREE_PASS = 32

/** The steps of one evaluation, in the order the request meets them (names as printed). */
export const STEPS = [
  'HTTP layer: dispatch (body budget, URL, route lookup)',
  'body read',
  'parse (JSON reader)',
  'validation (ajv, gate.http.request.v1)',
  'Gate headers',
  'route match',
  'caller identity hash (remembered per identity)',
  'guards',
  'kernel: capability, content hash, receipt body, answer text',
  'canonical form and id',
  'sign (Ed25519)',
  'stored row',
  'commit (group commit, one row)',
  'transparency append (per receipt, passes of 32)',
  'metrics',
  'decision log line',
  'answer (headers, socket write)',
] as const
export type Step = (typeof STEPS)[number]

/** The stopwatch over the evaluation's steps. */
export class CpuClock extends Clock<Step> {
  constructor() {
    super(STEPS)
  }
}

/** One request shape: its evaluate body and Gate headers. */
export interface Scenario {
  name: string
  body: string
  headers: Record<string, string>
}

/** The kernel's own methods, unwrapped (the pipeline times the instance's). */
export interface RawKernel {
  matchRoute: Kernel['matchRoute']
  callerHash: Kernel['callerHash']
  guardsRun: (ctx: unknown, evidence: []) => Promise<unknown>
}

export interface Pipeline {
  url: string
  kernel: Kernel
  raw: RawKernel
  routeTable: RouteTable
  stores: Stores
  signer: Signer
  metrics: GateMetrics
  clock: CpuClock
  scenarios: Scenario[]
  /** What the last request left behind, the inputs of the steps timed alone. */
  captured: { request?: GateHttpRequest; receiptBody?: HttpReceiptBody; evaluation?: Evaluation; guardContext?: unknown }
  observers: { metrics: KernelObserver; log: KernelObserver }
  close(): Promise<void>
}

/** The evaluate body of `method /pets` from the anonymous caller (the sidecar suite's request). */
export function evaluateBody(method: string): string {
  return JSON.stringify({ request_id: '0193a0b0-0000-7000-8000-000000000000', method, path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) })
}

/** Builds the pipeline over stores in `dir` and listens on 127.0.0.1. */
export async function startPipeline(dir: string): Promise<Pipeline> {
  const seed = generateSecret('ed25519')
  const signer = createSigner({ secret: seed })
  const stores = await openStores({ receiptDb: join(dir, 'receipts.db'), derivePublicKey: s => publicKeyFor(s) })
  const clock = new CpuClock()
  const captured: Pipeline['captured'] = {}
  const log = stores.receipts.log
  // the inline writer's steps, each timed
  const receipts: ReceiptWriter = {
    async write(body, context = {}) {
      captured.receiptBody = body
      let t = clock.now()
      const prepared = prepareHttpReceipt(body, signer.publicKey)
      t = clock.time('canonical form and id', t)
      const signature = signer.sign(utf8(prepared.signingInput))
      t = clock.time('sign (Ed25519)', t)
      const { receipt, json } = prepared.attach(signature)
      const row = createReceiptRow(receipt, json, context)
      t = clock.time('stored row', t)
      const { seq } = await log.append(row)
      clock.time('commit (group commit, one row)', t)
      return { receipt, json, seq }
    },
    writeCore: () => Promise.reject(new Error('not on this path')),
    onCommitted: follower => log.onCommitted(follower),
    flush: () => log.flush(),
    get healthy() {
      return log.healthy
    },
    close: () => log.close(),
  }
  const metrics = createGateMetrics({ service: 'bench', version: '0' })
  const logger = createGateLogger('bench', 'info', pino.destination({ dest: '/dev/null', sync: true }))
  const observers = {
    metrics: createDecisionObserver({ metrics, logger, decisionLevel: 'debug' })!,
    log: createDecisionObserver({ logger, decisionLevel: 'info' })!,
  }
  const observer: KernelObserver = {
    onDecision(evaluation, route, seconds) {
      let t = clock.now()
      observers.metrics.onDecision(evaluation, route, seconds)
      t = clock.time('metrics', t)
      observers.log.onDecision(evaluation, route, seconds)
      clock.time('decision log line', t)
    },
    onFailure: (err, request, seconds) => observers.metrics.onFailure(err, request, seconds),
  }
  const routeTable = routeTableFromSpec(PETS_SPEC_YAML)
  const kernel = new Kernel({
    signer,
    routeTable,
    policyHash: sha256Hex(PETS_SPEC_YAML),
    ports: { receipts, revocations: stores.revocations, budgets: stores.budgets, capabilities: stores.capabilities, approvals: stores.approvals, nonces: stores.nonces },
    observer,
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: SERVICE_DEFAULTS.approvalTtlSeconds,
    nonceTtlSeconds: SERVICE_DEFAULTS.nonceTtlSeconds,
  })
  const raw = timeKernelMethods(kernel, clock, captured)

  const backend = await openTransparencyLogStore(stores.paths.receipts)
  const checkpointer = new Checkpointer({ backend, signer: () => signer, intervalMs: 0, gatherMs: 3_600_000, acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)) })
  const controlAuth = createControlAuth('bench-control-token-0123456789')
  const routeObserver = createRouteObserver(metrics)
  let requestStart = 0
  let evaluated = 0
  const evaluate = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let t = clock.now()
    clock.add('HTTP layer: dispatch (body budget, URL, route lookup)', t - requestStart)
    const credential = controlAuth.presented(req)
    const body = await readBody(req, EVALUATE_BODY_LIMIT)
    t = clock.time('body read', t)
    const parsed = parseJsonBody(body, { uniqueMembersIn: 'query' })
    t = clock.time('parse (JSON reader)', t)
    if (!parsed.ok || !validate(REQUEST_SCHEMA, parsed.value).ok) throw new Error('the bench request is not a GateHttpRequest')
    const request = parsed.value as GateHttpRequest
    t = clock.time('validation (ajv, gate.http.request.v1)', t)
    const gate = readGateHeaders(req.headers, req.rawHeaders)
    t = clock.time('Gate headers', t)
    captured.request = request
    const timedBefore = clock.spentIn(INSIDE_KERNEL)
    const evaluation = await kernel.evaluate({ request, capabilityHeader: gate.capability, approvalId: gate.approvalId, nonceId: gate.nonceId, authenticated: credential === 'valid' })
    // what the kernel spent besides the steps timed inside it
    clock.add('kernel: capability, content hash, receipt body, answer text', clock.now() - t - (clock.spentIn(INSIDE_KERNEL) - timedBefore))
    captured.evaluation = evaluation
    // the checkpointer's work, charged to the requests it covers (each 32nd request pays for 32)
    if (++evaluated % TREE_PASS === 0) {
      t = clock.now()
      await checkpointer.catchUp()
      clock.time('transparency append (per receipt, passes of 32)', t)
    }
    t = clock.now()
    sendJsonText(res, 200, evaluation.responseJson, { 'x-gate-receipt-id': evaluation.receipt.id })
    clock.time('answer (headers, socket write)', t)
  }
  const router = new Router().add('POST', '/gate/evaluate', evaluate)
  const server = createGateServer({
    router,
    onRouteDone(route, req, res, seconds) {
      const t = clock.now()
      routeObserver(route, req, res, seconds)
      clock.time('metrics', t)
    },
  })
  server.server.prependListener('request', () => (requestStart = clock.now()))
  // the route metric is recorded as the answer closes (the server's listener, added first): then the request ends
  server.server.on('request', (_req: IncomingMessage, res: ServerResponse) => res.on('close', () => clock.endRequest()))
  const address = await server.listen('127.0.0.1', 0)

  const token = signCapability({ id: 'bench-capability', subject: createSigner({ secret: generateSecret('ed25519') }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, issued_at: Math.floor(Date.now() / 1000) - 10, expires_at: Math.floor(Date.now() / 1000) + 3600 }, signer)
  const scenarios: Scenario[] = [
    { name: 'GET allow', body: evaluateBody('GET'), headers: { 'content-type': 'application/json' } },
    { name: 'POST + valid token', body: evaluateBody('POST'), headers: { 'content-type': 'application/json', 'x-gate-capability': Buffer.from(JSON.stringify(token)).toString('base64url') } },
  ]
  return {
    url: `http://127.0.0.1:${address.port}/gate/evaluate`,
    kernel,
    raw,
    routeTable,
    stores,
    signer,
    metrics,
    clock,
    scenarios,
    captured,
    observers,
    async close() {
      await server.drain(1000)
      await checkpointer.stop()
      await backend.close()
      await closeStores(stores)
    },
  }
}

// The steps timed inside Kernel.evaluate for the current request (the kernel's remainder is the rest).
const INSIDE_KERNEL: readonly Step[] = [
  'route match',
  'caller identity hash (remembered per identity)',
  'guards',
  'canonical form and id',
  'sign (Ed25519)',
  'stored row',
  'commit (group commit, one row)',
  'metrics',
  'decision log line',
]
/** Times the kernel's route match, caller hash and guards through the instance's own methods. */
function timeKernelMethods(kernel: Kernel, clock: CpuClock, captured: Pipeline['captured']): RawKernel {
  const timed = (step: Step, micros: number) => clock.add(step, micros)
  const matchRoute = kernel.matchRoute.bind(kernel)
  kernel.matchRoute = (method, path) => {
    const t = clock.now()
    const route = matchRoute(method, path)
    timed('route match', clock.now() - t)
    return route
  }
  const callerHash = kernel.callerHash.bind(kernel)
  kernel.callerHash = caller => {
    const t = clock.now()
    const hash = callerHash(caller)
    timed('caller identity hash (remembered per identity)', clock.now() - t)
    return hash
  }
  const run = kernel.guards.run.bind(kernel.guards)
  kernel.guards.run = async (ctx, evidence) => {
    captured.guardContext = ctx
    const t = clock.now()
    const outcome = await run(ctx, evidence)
    timed('guards', clock.now() - t)
    return outcome
  }
  return { matchRoute, callerHash, guardsRun: (ctx, evidence) => run(ctx as never, evidence) }
}
