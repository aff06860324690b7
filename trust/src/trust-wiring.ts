// Wires trust-control onto its stores (SQLite or PostgreSQL, through store-ports.ts): adapts the receipt,
// capability, budget and authority stores to the route ports (ports.ts), issues and revokes, and mounts
// the route table into a host's router. `gate trust serve` (server/) and the sidecar's own /v1 routes
// both wire through here.
import { sha256Hex, signCapability, uuidv7, type CapabilityScope, type CapabilityToken, type HttpReceiptBody } from '@gate/sdk'
import { AnalyticsRollup } from './analytics-rollup.js'
import type { RotatingAuthority } from './authority.js'
import type {
  AuthorityPort,
  BudgetCapturePort,
  BudgetReportPort,
  CapabilityIssuerPort,
  ClusterPort,
  HealthPort,
  LineagePort,
  ListedReceiptPort,
  ReceiptCorpusPort,
  ReceiptIngestPort,
  RevocationFeedPort,
  RevocationPort,
  TransparencyPort,
  TrustAuthenticator,
  TrustDeps,
} from './ports.js'
import type { ReceiptQueryEngine } from './receipt-query.js'
import { revocationReceiptBody } from './revocation-receipt.js'
import { createQueryEngine, createTrustRoutes, type TrustRouteOptions } from './routes/route-table.js'
import type { TrustHandler } from './routes/trust-route.js'
import type { TrustReceiptStore, TrustStores } from './store-ports.js'

/** Writes a revocation's receipt (the host's receipt writer). */
export interface RevocationReceiptWriter {
  write(body: HttpReceiptBody, context: { kind: 'decision' }): Promise<unknown>
}

/** Where routes are mounted: the host's router. */
export interface RouteSink {
  add(method: string, path: string, handler: TrustHandler): unknown
}

/** The receipt store as trust-control's corpus. */
export function createCorpusPort(receipts: Pick<TrustReceiptStore, 'log' | 'query'>): ReceiptCorpusPort {
  const { log, query } = receipts
  return {
    keepsRollups: query.keepsRollups === true,
    latestSeq: () => query.latestSeq(),
    queryPage: (filter, limit, order) => query.queryPage(filter, limit, order),
    countMatching: filter => query.countMatching(filter),
    aggregate: (filter, grouping, bucketSeconds, perBucket) => query.aggregate(filter, grouping, bucketSeconds, perBucket),
    getById: id => query.getById(id),
    findFinals: (seq, id) => query.findFinals(seq, id),
    listChain: (chainId, limit) => query.listChain(chainId, limit),
    setCoreJson: (seq, json) => log.setCoreJson(seq, json),
  }
}

/** Tool and child receipts, kept in the receipt store's `listed_receipts` table; `backend` names where (ReceiptListResponse). */
export function createListedPort(receipts: TrustReceiptStore, backend: string): ListedReceiptPort {
  return {
    backend,
    append: input => receipts.listed.append(input),
    list: (kind, filter, limit) => receipts.listed.list(kind, filter, limit),
  }
}

export function createLineagePort(stores: Pick<TrustStores, 'capabilities'>): LineagePort {
  return {
    idsForSubject: subject => stores.capabilities.idsForSubject(subject),
    subjectsOf: ids => stores.capabilities.subjectsOf(ids),
  }
}

export function createBudgetReportPort(stores: Pick<TrustStores, 'budgets'>): BudgetReportPort {
  return {
    listGrants: limit => stores.budgets.listGrants(limit),
    usage: id => stores.budgets.usage(id),
  }
}

/** Store health for /health; `available` says whether a shared database is reachable now (every store is in it). */
export function createHealthPort(stores: TrustStores, available: () => boolean = () => true): HealthPort {
  const backend = (ephemeral: boolean) => (ephemeral ? 'ephemeral' : 'durable') as 'ephemeral' | 'durable'
  return {
    stores: () => {
      const up = available()
      return {
        receipts: { backend: backend(stores.receipts.isEphemeral), healthy: up && stores.receipts.log.healthy },
        revocations: { backend: backend(stores.revocations.isEphemeral), healthy: up },
        budgets: { backend: backend(stores.budgets.isEphemeral), healthy: up && stores.budgets.healthy },
        authority: { backend: backend(stores.authority.isEphemeral), healthy: up },
        capabilities: { backend: backend(stores.capabilities.isEphemeral), healthy: up },
      }
    },
  }
}

/**
 * Issues capability tokens with the authority's current signer and remembers them (the lineage the
 * agent filter joins on), inside `authority.exclusive` when it has one, so no node issues under a key
 * being retired. The sidecar's pinned key has none.
 */
export function createIssuer(
  stores: Pick<TrustStores, 'capabilities'>,
  authority: Pick<RotatingAuthority, 'signer'> & Partial<Pick<RotatingAuthority, 'exclusive'>>,
  now: () => number,
): CapabilityIssuerPort {
  return {
    issue(request: { subjectPublicKey: string; scope: CapabilityScope; ttlSeconds: number }): Promise<CapabilityToken> {
      const issue = async () => {
        const at = now()
        const token = signCapability(
          { schema: 'gate.capability.v1', id: `cap_${uuidv7()}`, subject: request.subjectPublicKey, scope: request.scope, issued_at: at, expires_at: at + request.ttlSeconds },
          authority.signer(),
        )
        await stores.capabilities.remember(token)
        return token
      }
      // a rotating authority: no rotation between signing and recording (a pinned key needs no section)
      return authority.exclusive === undefined ? issue() : authority.exclusive(issue)
    },
  }
}

/** policy_hash of trust-control's own receipts: it loads no policy document (SHA-256 of zero bytes, as the kernel without one). */
export const NO_POLICY_HASH = sha256Hex('')

/**
 * Revokes and, on a new revocation, writes a signed receipt of it before answering (spec 02:
 * gate_receipt_sign_failed covers a revocation receipt that could not be signed). The write (signing
 * with `authority.signer()`, then the commit) runs inside `exclusive`, so a rotation never retires the
 * key between them.
 */
export function createRevoker(stores: Pick<TrustStores, 'revocations' | 'capabilities'>, receipts: RevocationReceiptWriter, authority: Pick<RotatingAuthority, 'exclusive'>, now: () => number): RevocationPort {
  return {
    async revoke(capabilityId: string) {
      const result = await stores.revocations.revoke(capabilityId)
      if (result.newlyRevoked) {
        await authority.exclusive(() => receipts.write(revocationReceiptBody(capabilityId, NO_POLICY_HASH, now()), { kind: 'decision' }))
      }
      return { ...result, issued: (await stores.capabilities.get(capabilityId)) !== undefined }
    },
  }
}

export interface TrustDepsOptions {
  stores: TrustStores
  /** Where tool and child receipts are kept (ReceiptListResponse.backend), default `sqlite` (`memory` for an in-memory store). */
  listedBackend?: string
  auth: TrustAuthenticator
  authority: AuthorityPort
  issuer: CapabilityIssuerPort
  revocations: RevocationPort
  transparency?: TransparencyPort
  ingest?: ReceiptIngestPort
  budgetCapture?: BudgetCapturePort
  revocationFeed?: RevocationFeedPort
  cluster?: ClusterPort
  /** Whether the shared database is reachable now (store health); default always. */
  available?: () => boolean
  now?: () => number
  log: (line: string) => void
  /** Counts stored receipts refused a core form because they do not verify (the metric). */
  onUnverifiedReceipt?: TrustDeps['onUnverifiedReceipt']
}

/** Trust-control's ports over the opened stores. */
export function createTrustDeps(options: TrustDepsOptions): TrustDeps {
  const { stores } = options
  return {
    auth: options.auth,
    corpus: createCorpusPort(stores.receipts),
    listed: createListedPort(stores.receipts, options.listedBackend ?? (stores.receipts.isEphemeral ? 'memory' : 'sqlite')),
    lineage: createLineagePort(stores),
    budgets: createBudgetReportPort(stores),
    authority: options.authority,
    health: createHealthPort(stores, options.available),
    issuer: options.issuer,
    revocations: options.revocations,
    transparency: options.transparency,
    ingest: options.ingest,
    budgetCapture: options.budgetCapture,
    revocationFeed: options.revocationFeed,
    cluster: options.cluster,
    now: options.now ?? (() => Math.floor(Date.now() / 1000)),
    log: options.log,
    onUnverifiedReceipt: options.onUnverifiedReceipt,
  }
}

/** Mounts every trust-control route into `router`; returns the query engine and analytics rollup the routes share. */
export function mountTrustRoutes(router: RouteSink, deps: TrustDeps, options: TrustRouteOptions = {}): { engine: ReceiptQueryEngine; rollup: AnalyticsRollup | undefined } {
  const engine = options.engine ?? createQueryEngine(deps)
  const rollup = options.rollup ?? inMemoryRollup(deps)
  for (const route of createTrustRoutes(deps, { ...options, engine, rollup })) router.add(route.method, route.path, route.handler)
  return { engine, rollup }
}

/** The in-memory analytics rollup, unless the store keeps rollups itself (PostgreSQL). */
export function inMemoryRollup(deps: Pick<TrustDeps, 'corpus' | 'log'>): AnalyticsRollup | undefined {
  return deps.corpus.keepsRollups === true ? undefined : new AnalyticsRollup(deps.corpus, { log: deps.log })
}
