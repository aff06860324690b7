// Assembles a running Gate service: policy, authority, stores, kernel, routes and the HTTP server.
// `gate sidecar` runs it as is; `gate api protect` adds the proxy as the fallback handler.
import { readFile } from 'node:fs/promises'
import { UNIX_PREFIX } from '@gate/sdk'
import { sendError } from '@gate/sdk/server'
import { createIssuer, createPinnedAuthority, createTrustDeps, mountTrustRoutes, revocationReceiptBody, type TrustAuthenticator } from '@gate/trust'
import { createControlAuth } from '../http/control-auth.js'
import { Router } from '../http/router.js'
import { createGateServer, type FallbackHandler, type GateServer } from '../http/server.js'
import { Kernel } from '../kernel/kernel.js'
import type { SessionLimits } from '../kernel/guards/session-limit.js'
import { createEvaluateRoute } from '../routes/evaluate.js'
import { createVerifyRoute } from '../routes/verify.js'
import { createHealthRoute, createLiveRoute } from '../routes/health.js'
import { createGetApprovalRoute, createListApprovalsRoute, createRespondRoute } from '../routes/approvals.js'
import type { RouteContext } from '../routes/context.js'
import { formatBaseUrl, parseServiceListenAddress } from '../config/listen-address.js'
import { listenFailure } from '../config/listen-check.js'
import { listenerHostGuard } from '../http/listener-host-guard.js'
import { removeStaleSocket } from '../http/unix-socket.js'
import { ConfigError } from '../errors.js'
import type { Authority } from '../config/authority-seed.js'
import type { ListenerTimeouts } from '../config/listener-timeouts.js'
import type { LoadedPolicy } from './load-policy.js'
import type { ServiceStores } from './service-stores.js'
import { sqliteTransparencyBackend, startTransparencyLog, trustedKeysOf } from './transparency-wiring.js'
import type { TransparencySettings } from '../config/transparency-flags.js'
import { grantWarnings } from './grant-warnings.js'
import { createMetricsRoute } from '../routes/metrics.js'
import type { GateMetrics } from '../observability/metrics.js'
import { createDecisionObserver } from '../observability/decision-observer.js'
import { instrumentReceiptWriter } from '../observability/instrumented-writer.js'
import { createRouteObserver, observeProxy, serverSources } from '../observability/http-metrics.js'
import { registerTransparencyMetrics } from '../observability/transparency-metrics.js'
import { registerFleetMetrics } from '../observability/fleet-metrics.js'
import { errorFields, type Logger } from '../observability/logger.js'
import type { Level } from 'pino'
import type { Tracer } from '@opentelemetry/api'
import type { FleetLink } from '../fleet/fleet-link.js'

/** Resolved settings (config/service-config.ts, the same field names): nothing here defaults them. */
export interface ServiceOptions {
  listen: string
  timeouts: ListenerTimeouts
  /** Host names Gate's routes answer besides the loopback ones (--allowed-host; DNS rebinding). */
  allowedHosts: readonly string[]
  policy: LoadedPolicy
  authority: Authority
  stores: ServiceStores
  /** The control token (config/control-token.ts); the control routes always need it. */
  controlToken: string
  trustedIssuers: readonly string[]
  strictNonces: boolean
  /** Limits on agent sessions (gate mcp serve, serve-http, wire serve, run); default none. */
  sessionLimits?: SessionLimits
  approvalTtlSeconds: number
  nonceTtlSeconds: number
  /** `tracer`: set when tracing is on, for the fallback's own spans. */
  fallback?: (kernel: Kernel, tracer: Tracer | undefined) => FallbackHandler
  /** The Merkle tree and checkpoints over the receipts. */
  transparency: TransparencySettings
  log: (line: string) => void
  /** The Prometheus registry served at GET /metrics; undefined turns metrics off (--no-metrics). */
  metrics?: GateMetrics
  /** A token that reads the metrics and nothing else (GATE_METRICS_TOKEN). */
  metricsScrapeToken?: string
  /** The structured log: decision lines (at `decisionLevel`) and request errors with their causes. */
  logger: Logger
  /** Level of the one line per decision (--decision-log-level). */
  decisionLevel: Level
  /** The link to trust-control (--control-url): followed issuers and /gate/health's fleet block. */
  fleet?: Pick<FleetLink, 'trustedIssuers' | 'health'>
  /** Set when tracing is on (observability/tracing.ts): the evaluate route and the fallback make spans. */
  tracer?: Tracer
}

export interface RunningService {
  /** `http://host:port`, or `unix:PATH` for a Unix domain socket. */
  url: string
  /** The bound address; '' on a Unix socket. */
  host: string
  /** The bound port; 0 on a Unix socket. */
  port: number
  /** The socket's path when listening on a Unix domain socket, else null. */
  socketPath: string | null
  kernel: Kernel
  server: GateServer
  /** Tool and child receipts (the receipt store's `listed_receipts`): the MCP edges record relayed requests here. */
  listedReceipts: Pick<ServiceStores['raw']['receipts']['listed'], 'append'>
  /** Drains in-flight requests, then flushes and closes the stores. */
  close(graceMs?: number): Promise<void>
}

const CHECKPOINT_ON_CLOSE_TIMEOUT_MS = 5000

let cachedVersion: string | undefined
export async function packageVersion(): Promise<string> {
  cachedVersion ??= (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  return cachedVersion
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const listen = parseServiceListenAddress(options.listen)
  // a stale socket is cleared (and anything else there refused) before anything is started
  if (listen.kind === 'unix') await removeStaleSocket(listen.path)
  const { stores, authority, metrics } = options
  // every receipt of the process (decisions, finals, events) goes through the instrumented writer
  const ports = metrics === undefined ? stores.ports : { ...stores.ports, receipts: instrumentReceiptWriter(stores.ports.receipts, metrics) }
  const kernel = new Kernel({
    signer: authority.signer,
    routeTable: options.policy.routeTable,
    policyHash: options.policy.policyHash,
    ports,
    observer: createDecisionObserver({ metrics, logger: options.logger, decisionLevel: options.decisionLevel }),
    trustedIssuers: options.trustedIssuers,
    followedIssuers: options.fleet === undefined ? undefined : () => options.fleet!.trustedIssuers(),
    previousKeys: () => stores.previousKeys(),
    strictNonces: options.strictNonces,
    sessionLimits: options.sessionLimits,
    approvalTtlSeconds: options.approvalTtlSeconds,
    nonceTtlSeconds: options.nonceTtlSeconds,
  })
  // always a token, on TCP and on the Unix socket alike (docs/security.md)
  const controlAuth = createControlAuth(options.controlToken)
  const ctx: RouteContext = {
    kernel,
    version: await packageVersion(),
    receiptBackend: stores.receiptBackend,
    revocationBackend: stores.revocationBackend,
    receiptStoreHealthy: () => stores.healthy(),
    controlAuth,
    approvals: stores.approvals,
    capabilities: stores.capabilities,
    fleet: options.fleet === undefined ? undefined : () => options.fleet!.health(),
    log: options.log,
    tracer: options.tracer,
  }
  // The sidecar's /v1 helpers: admin-only, same control token (docs/security.md).
  const trustAuth: TrustAuthenticator = {
    authenticate(req) {
      const r = controlAuth.check(req)
      return r.ok ? { ok: true, principal: { kind: 'admin' } } : r
    },
  }
  let transparency
  try {
    transparency = await startTransparencyLog({
      receipts: stores.raw.receipts,
      openBackend: sqliteTransparencyBackend(stores.raw),
      writer: ports.receipts,
      settings: options.transparency,
      signer: () => authority.signer,
      // rows another process appended (trust-control beside it) must be signed by a key its authority trusts
      acceptedSigners: trustedKeysOf(() => [authority.signer.publicKey, ...stores.raw.authority.trustedPublicKeys()]),
      onUnverified: metrics === undefined ? undefined : step => metrics.recordUnverifiedReceipt('checkpoint', step),
      log: options.log,
    })
  } catch (err) {
    await stores.close()
    throw err
  }
  const router = new Router()
    .add('POST', '/gate/evaluate', createEvaluateRoute(ctx))
    .add('POST', '/gate/verify', createVerifyRoute(ctx))
    .add('GET', '/gate/live', createLiveRoute(ctx))
    .add('GET', '/gate/health', createHealthRoute(ctx))
    .add('GET', '/approvals', createListApprovalsRoute(ctx))
    .add('GET', '/approvals/:id', createGetApprovalRoute(ctx))
    .add('POST', '/approvals/:id/respond', createRespondRoute(ctx))
  // Trust-control (/v1 receipt query, analytics, reports, authority, issuance, revocation) over the same
  // stores, admin-only behind the control token. GET /health is left out when a proxy fallback serves
  // the upstream, whose own /health it would shadow.
  mountTrustRoutes(
    router,
    createTrustDeps({
      stores: stores.raw,
      auth: trustAuth,
      authority: createPinnedAuthority(
        authority.signer,
        stores.raw.authority,
        'this process signs with the key it was started with (--authority-seed-file or a per-boot key); rotate with gate trust serve --authority-db',
      ),
      issuer: { ...createIssuer(stores.raw, { signer: () => kernel.signer }, () => kernel.now()), scopeWarnings: scope => grantWarnings(scope, options.policy.routeTable) },
      revocations: { revoke: id => revoke(kernel, stores, id) },
      transparency,
      now: () => kernel.now(),
      log: options.log,
      onUnverifiedReceipt: metrics === undefined ? undefined : step => metrics.recordUnverifiedReceipt('read', step),
    }),
    { health: options.fallback === undefined },
  )
  if (metrics !== undefined) {
    // /gate/metrics always; /metrics too unless a proxied upstream owns every other path (its own
    // /metrics is common, and shadowing it would break the upstream's monitoring)
    const route = createMetricsRoute({ metrics, auth: trustAuth, scrapeToken: options.metricsScrapeToken, sendFailure: sendError })
    router.add('GET', '/gate/metrics', route)
    if (options.fallback === undefined) router.add('GET', '/metrics', route)
  }
  const fallback = options.fallback?.(kernel, options.tracer)
  const hostGuard = listenerHostGuard(listen, options.allowedHosts)
  const server = createGateServer({
    router,
    timeouts: options.timeouts,
    routeGuard: hostGuard === undefined ? undefined : req => hostGuard.refusal(req),
    fallback: fallback === undefined || metrics === undefined ? fallback : observeProxy(metrics, fallback),
    onError: err => options.logger.error({ event: 'request_failed', ...errorFields(err) }, 'request failed'),
    onRouteDone: metrics === undefined ? undefined : createRouteObserver(metrics),
  })
  metrics?.setSources({ storeHealth: () => ({ receipts: stores.healthy() }), ...serverSources(server) })
  if (metrics !== undefined && options.fleet !== undefined) registerFleetMetrics(metrics.registry, () => options.fleet!.health())
  if (metrics !== undefined && transparency !== undefined) {
    // a status that cannot be read now leaves the gauges out, never the start
    await registerTransparencyMetrics(metrics.registry, () => transparency.status()).catch(err => options.log(`warning: transparency log metrics unavailable: ${(err as Error).message}`))
  }
  let bound: { url: string; host: string; port: number; socketPath: string | null }
  try {
    if (listen.kind === 'unix') {
      await server.listenOnSocket(listen.path)
      bound = { url: `${UNIX_PREFIX}${listen.path}`, host: '', port: 0, socketPath: listen.path }
    } else {
      const address = await server.listen(listen.host, listen.port)
      hostGuard?.bindPort(address.port)
      bound = { url: formatBaseUrl(address.address, address.port), host: address.address, port: address.port, socketPath: null }
    }
  } catch (err) {
    await transparency?.close()
    await stores.close()
    if (err instanceof ConfigError) throw err
    throw listen.kind === 'tcp' ? listenFailure(listen, err) : new ConfigError(`cannot listen on ${options.listen}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  return {
    ...bound,
    kernel,
    server,
    listedReceipts: stores.raw.receipts.listed,
    async close(graceMs = 25_000) {
      await server.drain(graceMs)
      // a last checkpoint, so every receipt this process committed is covered by one
      await transparency?.flush(CHECKPOINT_ON_CLOSE_TIMEOUT_MS).catch(err => options.log(`transparency log: final checkpoint failed: ${(err as Error).message}`))
      await transparency?.close()
      await stores.close()
    },
  }
}

// Revocation signs a receipt (spec 02: gate_receipt_sign_failed covers a revocation receipt that
// could not be signed), stored before the answer.
async function revoke(kernel: Kernel, stores: ServiceStores, capabilityId: string) {
  const result = await stores.capabilities.revoke(capabilityId)
  if (result.newlyRevoked) await kernel.recordEvent(revocationReceiptBody(capabilityId, kernel.policyHash, kernel.now()))
  return { ...result, issued: (await stores.raw.capabilities.get(capabilityId)) !== undefined }
}
