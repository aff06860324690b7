// The path of one request through `gate api protect`, assembled in this process from the modules the
// service runs, with a CPU stopwatch at each step (cpu-budget.ts): Gate's HTTP layer with the proxy as
// its fallback (createGateServer, createProxy, the metrics wrapper), the kernel deciding in process,
// both receipts written as the inline writer does it (canonical form and id, signature, row, commit
// through the receipt log), the upstream exchange over the proxy's undici pool to an upstream in a
// process of its own, and the answer. A lone request takes exactly this path in `gate api protect`.
// The steps inside the proxy are told apart by where it calls the evaluator (matchRoute, evaluate,
// finalize) and by the receipt writer (decision or final).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { createSigner, generateSecret, prepareHttpReceipt, publicKeyFor, sha256Hex, signCapability, utf8, type Signer } from '@gate/sdk'
import { createProxy, type GateProxy } from '@gate/proxy'
import { Kernel, routeTableFromSpec, type Evaluation, type RouteMatch } from '@gate/sidecar'
import {
  Checkpointer,
  closeStores,
  createGateMetrics,
  createGateServer,
  createReceiptRow,
  observeProxy,
  openStores,
  openTransparencyLogStore,
  Router,
  SERVICE_DEFAULTS,
  type ReceiptWriter,
  type Stores,
} from '@gate/sidecar/testing'
import { CpuClock } from '../cpu-clock.js'

/** The steps of one proxied request, in the order it meets them (names as printed). */
export const PROXY_STEPS = [
  'request: dispatch, target, Gate headers, body read',
  'route match',
  'GateHttpRequest (caller identity, id, body hash)',
  'kernel: capability, revocations, hashes, guards, receipt body',
  'decision receipt: canonical form and id',
  'decision receipt: sign (Ed25519)',
  'decision receipt: stored row',
  'decision receipt: commit',
  'upstream exchange (request headers, undici, the upstream answer head)',
  'final receipt: the re-signed copy',
  'final receipt: canonical form and id',
  'final receipt: sign (Ed25519)',
  'final receipt: stored row',
  'final receipt: commit',
  'answer: head, body relay, end',
  'transparency append (two receipts, passes of 16 requests)',
  'metrics',
] as const
export type ProxyStep = (typeof PROXY_STEPS)[number]

/** Requests per transparency pass in place (32 receipts: the service gathers 100 ms of commits per pass). */
export const TREE_PASS_REQUESTS = 16

export const ITEMS_SPEC = `openapi: 3.1.0
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

export interface ProxyPipeline {
  url: string
  clock: CpuClock<ProxyStep>
  signer: Signer
  kernel: Kernel
  proxy: GateProxy
  /** A capability for POST /items, as its X-Gate-Capability value. */
  capability: string
  /** What the last request left behind (the steps timed alone start from it). */
  captured: { decision?: Evaluation }
  close(): Promise<void>
}

const WRITER_STEPS = {
  decision: ['decision receipt: canonical form and id', 'decision receipt: sign (Ed25519)', 'decision receipt: stored row', 'decision receipt: commit'],
  final: ['final receipt: canonical form and id', 'final receipt: sign (Ed25519)', 'final receipt: stored row', 'final receipt: commit'],
} as const satisfies Record<string, readonly ProxyStep[]>

/** Builds the pipeline over stores in `dir`, in front of `upstream`, listening on 127.0.0.1. */
export async function startProxyPipeline(dir: string, upstream: string): Promise<ProxyPipeline> {
  const seed = generateSecret('ed25519')
  const signer = createSigner({ secret: seed })
  const stores: Stores = await openStores({ receiptDb: join(dir, 'proxy-receipts.db'), derivePublicKey: s => publicKeyFor(s) })
  const clock = new CpuClock(PROXY_STEPS)
  const captured: ProxyPipeline['captured'] = {}
  const log = stores.receipts.log
  const receipts: ReceiptWriter = {
    async write(body, context = {}) {
      const [canonical, sign, row, commit] = WRITER_STEPS[context.kind === 'final' ? 'final' : 'decision']
      let t = clock.now()
      const prepared = prepareHttpReceipt(body, signer.publicKey)
      t = clock.time(canonical, t)
      const signature = signer.sign(utf8(prepared.signingInput))
      t = clock.time(sign, t)
      const { receipt, json } = prepared.attach(signature)
      const stored = createReceiptRow(receipt, json, context)
      t = clock.time(row, t)
      const { seq } = await log.append(stored)
      clock.time(commit, t)
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
  const routeTable = routeTableFromSpec(ITEMS_SPEC)
  const kernel = new Kernel({
    signer,
    routeTable,
    policyHash: sha256Hex(ITEMS_SPEC),
    ports: { receipts, revocations: stores.revocations, budgets: stores.budgets, capabilities: stores.capabilities, approvals: stores.approvals, nonces: stores.nonces },
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: SERVICE_DEFAULTS.approvalTtlSeconds,
    nonceTtlSeconds: SERVICE_DEFAULTS.nonceTtlSeconds,
  })
  const backend = await openTransparencyLogStore(stores.paths.receipts)
  const checkpointer = new Checkpointer({ backend, signer: () => signer, intervalMs: 0, gatherMs: 3_600_000, acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)) })

  let mark = 0
  let proxied = 0
  const decisionSteps: readonly ProxyStep[] = WRITER_STEPS.decision
  const finalSteps: readonly ProxyStep[] = WRITER_STEPS.final
  const proxy = createProxy<Evaluation, RouteMatch>(
    {
      matchRoute(method, path) {
        const t = clock.time('request: dispatch, target, Gate headers, body read', mark)
        const route = kernel.matchRoute(method, path)
        mark = clock.time('route match', t)
        return route
      },
      async evaluate(input) {
        const t = clock.time('GateHttpRequest (caller identity, id, body hash)', mark)
        const before = clock.spentIn(decisionSteps)
        const evaluation = await kernel.evaluate(input)
        mark = clock.now()
        clock.add('kernel: capability, revocations, hashes, guards, receipt body', mark - t - (clock.spentIn(decisionSteps) - before))
        captured.decision = evaluation
        return evaluation
      },
      async finalize(decision, status) {
        let t = clock.time('upstream exchange (request headers, undici, the upstream answer head)', mark)
        // the checkpointer's work, charged to the requests it covers (each 16th request pays for 16)
        if (++proxied % TREE_PASS_REQUESTS === 0) {
          await checkpointer.catchUp()
          t = clock.time('transparency append (two receipts, passes of 16 requests)', t)
        }
        const before = clock.spentIn(finalSteps)
        const written = await kernel.finalize(decision, status)
        mark = clock.now()
        clock.add('final receipt: the re-signed copy', mark - t - (clock.spentIn(finalSteps) - before))
        return written
      },
    },
    { upstream },
  )
  const metrics = createGateMetrics({ service: 'bench', version: '0' })
  const recordProxy = metrics.recordProxy.bind(metrics)
  metrics.recordProxy = (route, status, seconds) => {
    const t = clock.time('answer: head, body relay, end', mark)
    recordProxy(route, status, seconds)
    mark = clock.time('metrics', t)
  }
  const server = createGateServer({ router: new Router(), fallback: observeProxy(metrics, (req, res) => proxy.handle(req, res)) })
  server.server.prependListener('request', () => (mark = clock.now()))
  server.server.on('request', (_req: IncomingMessage, res: ServerResponse) => res.on('close', () => clock.endRequest()))
  const address = await server.listen('127.0.0.1', 0)
  const url = `http://127.0.0.1:${address.port}`
  const now = Math.floor(Date.now() / 1000)
  const token = signCapability({ id: 'bench-proxy-capability', subject: createSigner({ secret: generateSecret('ed25519') }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /items' }] }, issued_at: now - 10, expires_at: now + 3600 }, signer)
  return {
    url,
    clock,
    signer,
    kernel,
    proxy,
    capability: Buffer.from(JSON.stringify(token)).toString('base64url'),
    captured,
    async close() {
      await server.drain(1000)
      await proxy.close()
      await checkpointer.stop()
      await backend.close()
      await closeStores(stores)
    },
  }
}
