// Every trust-control route in one table, so `gate trust serve` and the sidecar mount the same set.
// Each handler is wrapped with the response headers spec 03 puts on every trust-control response
// (a Content-Security-Policy layer) plus no-store: receipts and reports are never cached by proxies.
import { sendTrustError } from '@gate/sdk/server'
import { NoQuorumError } from '../errors.js'
import type { ClusterPort, TrustDeps } from '../ports.js'
import { AnalyticsRollup } from '../analytics-rollup.js'
import { ReceiptQueryEngine } from '../receipt-query.js'
import { createAnalyticsRoute } from './analytics.js'
import { createAuthorityRotateRoute, createAuthorityStatusRoute } from './authority.js'
import { createBudgetCancelRoute, createBudgetCaptureRoute } from './budgets.js'
import { createClusterStatusRoute } from './cluster.js'
import { createIssueRoute, createRevokeRoute } from './capabilities.js'
import { createTrustHealthRoute } from './health.js'
import { createEnrollRoute, createIngestRoute, createListKeysRoute } from './ingest.js'
import { createAppendReceiptRoute, createListReceiptsRoute } from './listed-receipts.js'
import { createAgentReceiptsRoute, createReceiptByIdRoute, createReceiptQueryRoute } from './receipts.js'
import { createReceiptChainRoute } from './receipt-chain.js'
import { createOperatorReportRoute } from './reports.js'
import { createRevocationFeedRoute } from './revocation-feed.js'
import { createTransparencyRoutes } from './transparency.js'
import { createUiRoutes } from './ui.js'
import type { TrustHandler, TrustRoute } from './trust-route.js'

export type { TrustHandler, TrustRoute } from './trust-route.js'

export interface TrustRouteOptions {
  /**
   * Mount `GET /health` and the receipt explorer at `/ui` (off where they would shadow a proxied
   * upstream's own paths). Default true.
   */
  health?: boolean
  /** Share a query engine (and its count cache) with other callers. */
  engine?: ReceiptQueryEngine
  /** Share the analytics rollup (e.g. to warm it at startup). */
  rollup?: AnalyticsRollup
}

/** Headers on every trust-control response. */
export const TRUST_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
})

/** The receipt query engine over `deps` (its unverified receipts reported to `deps.onUnverifiedReceipt`). */
export function createQueryEngine(deps: TrustDeps): ReceiptQueryEngine {
  return new ReceiptQueryEngine({ corpus: deps.corpus, lineage: deps.lineage, authority: deps.authority, log: deps.log, onUnverified: r => deps.onUnverifiedReceipt?.(r.failedStep) })
}

/** The trust-control route table over `deps`. */
export function createTrustRoutes(deps: TrustDeps, options: TrustRouteOptions = {}): TrustRoute[] {
  const engine = options.engine ?? createQueryEngine(deps)
  const rollup = options.rollup ?? (deps.corpus.keepsRollups === true ? undefined : new AnalyticsRollup(deps.corpus, { log: deps.log }))
  const read = { auth: deps.auth, engine, corpus: deps.corpus }
  const listed = { auth: deps.auth, listed: deps.listed, authority: deps.authority, corpus: deps.corpus }
  const routes: TrustRoute[] = [
    { method: 'GET', path: '/v1/authority', handler: createAuthorityStatusRoute(deps) },
    { method: 'POST', path: '/v1/authority', handler: createAuthorityRotateRoute(deps) },
    { method: 'POST', path: '/v1/capabilities/issue', handler: createIssueRoute(deps) },
    { method: 'POST', path: '/v1/revocations', handler: createRevokeRoute(deps) },
    { method: 'GET', path: '/v1/receipts/query', handler: createReceiptQueryRoute(read) },
    { method: 'GET', path: '/v1/agents/:subject_key/receipts', handler: createAgentReceiptsRoute(read) },
    { method: 'GET', path: '/v1/receipts/analytics', handler: createAnalyticsRoute({ ...read, lineage: deps.lineage, rollup }) },
    { method: 'GET', path: '/v1/reports/operator', handler: createOperatorReportRoute({ ...read, lineage: deps.lineage, budgets: deps.budgets, transparency: deps.transparency, rollup, now: deps.now }) },
    { method: 'GET', path: '/v1/receipts/tools', handler: createListReceiptsRoute(listed, 'tool') },
    { method: 'POST', path: '/v1/receipts/tools', handler: createAppendReceiptRoute(listed, 'tool') },
    { method: 'GET', path: '/v1/receipts/children', handler: createListReceiptsRoute(listed, 'child') },
    { method: 'POST', path: '/v1/receipts/children', handler: createAppendReceiptRoute(listed, 'child') },
    { method: 'GET', path: '/v1/receipts/chain', handler: createReceiptChainRoute(listed) },
    { method: 'GET', path: '/v1/receipts/:receipt_id', handler: createReceiptByIdRoute(read) },
    ...createTransparencyRoutes({ auth: deps.auth, corpus: deps.corpus, transparency: deps.transparency }),
  ]
  const { ingest, budgetCapture, revocationFeed, cluster } = deps
  if (ingest !== undefined) {
    routes.push(
      { method: 'POST', path: '/v1/receipts/ingest', handler: createIngestRoute({ auth: deps.auth, ingest, lineage: { corpus: deps.corpus, listed: deps.listed } }) },
      { method: 'POST', path: '/v1/keys/enroll', handler: createEnrollRoute({ auth: deps.auth, ingest }) },
      { method: 'GET', path: '/v1/keys', handler: createListKeysRoute({ auth: deps.auth, ingest }) },
    )
  }
  if (revocationFeed !== undefined) routes.push({ method: 'GET', path: '/v1/revocations', handler: createRevocationFeedRoute({ auth: deps.auth, feed: revocationFeed, authority: deps.authority }) })
  if (budgetCapture !== undefined) {
    routes.push(
      { method: 'POST', path: '/v1/budgets/capture', handler: createBudgetCaptureRoute({ auth: deps.auth, budgetCapture }) },
      { method: 'POST', path: '/v1/budgets/cancel', handler: createBudgetCancelRoute({ auth: deps.auth, budgetCapture }) },
    )
  }
  if (cluster !== undefined) routes.push({ method: 'GET', path: '/v1/internal/cluster/status', handler: createClusterStatusRoute({ cluster }) })
  if (options.health !== false) routes.unshift({ method: 'GET', path: '/health', handler: createTrustHealthRoute(deps) }, ...createUiRoutes())
  return routes.map(route => ({ ...route, handler: withTrustHeaders(cluster !== undefined && route.method === 'POST' ? withQuorum(cluster, route.handler) : route.handler) }))
}

/**
 * spec 03: a cluster-aware mutating request without quorum fails with 503, before anything is read or
 * written (a node that lost its database sees no peers, so it has no quorum either).
 */
export function withQuorum(cluster: ClusterPort, handler: TrustHandler): TrustHandler {
  return (req, res, params, url) => {
    const block = cluster.block()
    if (!block.hasQuorum) {
      sendTrustError(res, new NoQuorumError(`this node reaches ${block.reachableNodes} of ${block.peerCount + 1} nodes, quorum is ${block.quorumSize}`))
      return
    }
    return handler(req, res, params, url)
  }
}

/** Sets the trust-control response headers, then runs `handler`. */
export function withTrustHeaders(handler: TrustHandler): TrustHandler {
  return (req, res, params, url) => {
    for (const [name, value] of Object.entries(TRUST_RESPONSE_HEADERS)) res.setHeader(name, value)
    return handler(req, res, params, url)
  }
}
