// Assembles a running Gate service: policy, authority, stores, kernel, routes and the HTTP server.
// `gate sidecar` runs it as is; `gate api protect` adds the proxy as the fallback handler.
import { readFile } from 'node:fs/promises'
import { signCapability, uuidv7, type CapabilityScope, type CapabilityToken } from '@gate/sdk'
import type { TrustAuthenticator } from '@gate/trust'
import { createControlAuth } from '../http/control-auth.js'
import { Router } from '../http/router.js'
import { createGateServer, type FallbackHandler, type GateServer } from '../http/server.js'
import { Kernel } from '../kernel/kernel.js'
import { createEvaluateRoute } from '../routes/evaluate.js'
import { createVerifyRoute } from '../routes/verify.js'
import { createHealthRoute, createLiveRoute } from '../routes/health.js'
import { createGetApprovalRoute, createListApprovalsRoute, createRespondRoute } from '../routes/approvals.js'
import type { RouteContext } from '../routes/context.js'
import { formatBaseUrl, parseListenAddress } from '../config/listen-address.js'
import { ConfigError } from '../errors.js'
import type { Authority } from '../config/authority-seed.js'
import type { ListenerTimeouts } from '../config/listener-timeouts.js'
import type { LoadedPolicy } from './load-policy.js'
import type { ServiceStores } from './service-stores.js'
import { CoreBackfill } from './core-backfill.js'
import { createLoopPressure } from '@gate/sdk/server'
import { createPinnedAuthority, createTrustDeps, mountTrustRoutes } from './trust-wiring.js'
import { revocationReceiptBody } from './revocation-receipt.js'

export interface ServiceOptions {
  listen: string
  /** Timeouts of the listener (default LISTENER_TIMEOUT_DEFAULTS). */
  timeouts?: ListenerTimeouts
  policy: LoadedPolicy
  authority: Authority
  stores: ServiceStores
  /** The control token (config/control-token.ts); the control routes always need it. */
  controlToken: string
  trustedIssuers?: readonly string[]
  strictNonces?: boolean
  approvalTtlSeconds?: number
  nonceTtlSeconds?: number
  fallback?: (kernel: Kernel) => FallbackHandler
  log: (line: string) => void
}

export interface RunningService {
  url: string
  host: string
  port: number
  kernel: Kernel
  server: GateServer
  /** Drains in-flight requests, then flushes and closes the stores. */
  close(graceMs?: number): Promise<void>
}

let cachedVersion: string | undefined
export async function packageVersion(): Promise<string> {
  cachedVersion ??= (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  return cachedVersion
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { host, port } = parseListenAddress(options.listen)
  const { stores, authority } = options
  // receipts are signed on their own thread (signing/worker-signer.ts)
  const receiptSigner = await authority.startReceiptSigner(options.log)
  const kernel = new Kernel({
    signer: authority.signer,
    receiptSigner,
    routeTable: options.policy.routeTable,
    policyHash: options.policy.policyHash,
    ports: stores.ports,
    trustedIssuers: options.trustedIssuers,
    previousKeys: () => stores.previousKeys(),
    strictNonces: options.strictNonces,
    approvalTtlSeconds: options.approvalTtlSeconds,
    nonceTtlSeconds: options.nonceTtlSeconds,
  })
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
    log: options.log,
  }
  // The sidecar's /v1 helpers: admin-only, same control token (docs/security.md).
  const trustAuth: TrustAuthenticator = {
    authenticate(req) {
      const r = controlAuth.check(req)
      return r.ok ? { ok: true, principal: { kind: 'admin' } } : r
    },
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
      issuer: { issue: req => issue(kernel, stores, req) },
      revocations: { revoke: id => revoke(kernel, stores, id) },
      now: () => kernel.now(),
      log: options.log,
    }),
    { health: options.fallback === undefined },
  )
  // The core backfill's work list (a partial index: a one-time build on a store that predates it, done
  // before listening so no evaluation waits on it).
  try {
    await stores.raw.receipts.createCorePendingIndex()
  } catch (err) {
    await receiptSigner.close()
    await stores.close()
    throw err
  }
  const server = createGateServer({
    router,
    timeouts: options.timeouts,
    fallback: options.fallback?.(kernel),
    onError: err => options.log(`error: ${err instanceof Error ? err.message : String(err)}`),
  })
  let address
  try {
    address = await server.listen(host, port)
  } catch (err) {
    await receiptSigner.close()
    await stores.close()
    throw new ConfigError(`cannot listen on ${options.listen}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  // Core receipts are added after commit, off the request path (core-backfill.ts). A conversion (a second
  // signature) costs about what the evaluation did, and on a small host it competes with the requests
  // for the same cores, so it runs only while the event loop is mostly idle (under 10% busy over the
  // last half second) and never with a request in flight: under steady traffic receipts keep their HTTP
  // form until a quiet moment, and trust-control converts what a query returns on the spot.
  const loopBusy = createLoopPressure({ threshold: 0.1, windowMs: 500 })
  const backfill = new CoreBackfill({
    receipts: stores.raw.receipts,
    signer: () => authority.signer,
    convert: httpJsons => receiptSigner.toCoreJsons(httpJsons),
    busy: () => server.inFlight() > 0 || loopBusy(),
    // under steady traffic it waits for long stretches: look four times a second, not forty
    busyDelayMs: 250,
    log: options.log,
  })
  backfill.start()
  return {
    url: formatBaseUrl(address.address, address.port),
    host: address.address,
    port: address.port,
    kernel,
    server,
    async close(graceMs = 25_000) {
      await server.drain(graceMs)
      await backfill.stop()
      await receiptSigner.close()
      await stores.close()
    },
  }
}

async function issue(
  kernel: Kernel,
  stores: ServiceStores,
  req: { subjectPublicKey: string; scope: CapabilityScope; ttlSeconds: number },
): Promise<CapabilityToken> {
  const now = kernel.now()
  const token = signCapability(
    { schema: 'gate.capability.v1', id: `cap_${uuidv7()}`, subject: req.subjectPublicKey, scope: req.scope, issued_at: now, expires_at: now + req.ttlSeconds },
    kernel.signer,
  )
  await stores.capabilities.remember(token)
  return token
}

// Revocation signs a receipt (spec 02: gate_receipt_sign_failed covers a revocation receipt that
// could not be signed), stored before the answer.
async function revoke(kernel: Kernel, stores: ServiceStores, capabilityId: string) {
  const result = await stores.capabilities.revoke(capabilityId)
  if (result.newlyRevoked) await kernel.recordEvent(revocationReceiptBody(capabilityId, kernel.policyHash, kernel.now()))
  return result
}
