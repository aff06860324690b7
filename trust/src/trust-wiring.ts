// Wires trust-control (@gate/trust) onto its stores (SQLite or PostgreSQL, through stores/trust-stores.ts):
// adapts the receipt, capability, budget and authority stores to trust's ports, provides the two
// authority flavours (the sidecar's pinned signer, `gate trust serve`'s rotating authority store) and
// mounts the trust route table into a Router.
import {
  createSigner,
  generateSecret,
  sha256Hex,
  signCapability,
  uuidv7,
  type CapabilityScope,
  type CapabilityToken,
  type Signer,
} from '@gate/sdk'
import {
  AnalyticsRollup,
  AuthorityPinnedError,
  createQueryEngine,
  createTrustRoutes,
  type ReceiptQueryEngine,
  type AuthorityPort,
  type AuthorityStatus,
  type BudgetCapturePort,
  type BudgetReportPort,
  type CapabilityIssuerPort,
  type ClusterPort,
  type HealthPort,
  type LineagePort,
  type ListedReceiptPort,
  type ReceiptCorpusPort,
  type ReceiptIngestPort,
  type RevocationFeedPort,
  type RevocationPort,
  type TransparencyPort,
  type TrustAuthenticator,
  type TrustDeps,
  type TrustRouteOptions,
} from '@gate/trust'
import type { Router } from '../http/router.js'
import type { ReceiptWriter, TrustAuthorityStore, TrustReceiptStore, TrustStores } from '../stores/index.js'
import { revocationReceiptBody } from './revocation-receipt.js'

/** The receipt store as trust-control's corpus. */
export function createCorpusPort(receipts: Pick<TrustReceiptStore, 'log' | 'query'>): ReceiptCorpusPort {
  const { log, query } = receipts
  return {
    latestSeq: () => query.latestSeq(),
    queryPage: (filter, limit, order) => query.queryPage(filter, limit, order),
    countMatching: filter => query.countMatching(filter),
    aggregate: (filter, grouping, bucketSeconds, perBucket) => query.aggregate(filter, grouping, bucketSeconds, perBucket),
    getById: id => query.getById(id),
    findFinals: (seq, id) => query.findFinals(seq, id),
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
 * The sidecar's authority: the signer it was started with (seed file or per-boot key) is pinned for the
 * process lifetime, so rotation answers 409. Status is read from the authority store without writing
 * it: generation and rotation time when the store holds this key, 0 and null otherwise.
 */
export function createPinnedAuthority(signer: Signer, store: Pick<TrustAuthorityStore, 'trustedPublicKeys' | 'current'>, reason: string): AuthorityPort {
  return {
    signer: () => signer,
    status(): AuthorityStatus {
      const keys = store.trustedPublicKeys()
      const current = store.current()
      const index = keys.indexOf(signer.publicKey)
      return {
        publicKey: signer.publicKey,
        generation: index === -1 ? 0 : index + 1,
        rotatedAt: current?.publicKey === signer.publicKey ? current.rotatedAt : null,
        trustedPublicKeys: index === -1 ? [...keys, signer.publicKey] : keys,
      }
    },
    rotate: () => Promise.reject(new AuthorityPinnedError(reason)),
  }
}

/** `gate trust serve`'s authority: the authority store's current key, rotated in place. */
export interface RotatingAuthority extends AuthorityPort {
  /** Runs `fn` while no rotation can happen, on any node (sign-and-append of a receipt, issuance). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>
}

/** Options of `createRotatingAuthority`. */
export interface RotatingAuthorityOptions {
  /** Runs inside the rotation's critical section with the retiring signer, before its seed is wiped. */
  beforeRotate?: (retiring: Signer) => Promise<void>
  /** Rotation answers 409 with this reason (the key is pinned). */
  pinnedReason?: string
  /**
   * Holds a lock every node shares (PostgreSQL: an advisory lock): `shared` around signing, `exclusive`
   * around a rotation. Default: none (one process, which the in-process queue already serializes).
   */
  lock?: <T>(mode: 'shared' | 'exclusive', fn: () => Promise<T>) => Promise<T>
  /** Picks up a rotation another node made (reloads the store when its generation moved). */
  refresh?: () => Promise<unknown>
}

/**
 * An authority backed by the authority store. `beforeRotate` runs inside the rotation's critical
 * section with the retiring signer, before its seed is wiped: the core forms it can still make are
 * stored there (storeCoreForms), because a row it signed has none once the seed is gone. The signer
 * follows the store's current key (a rotation here, or one another node made and `refresh` loaded).
 */
export function createRotatingAuthority(store: TrustAuthorityStore, options: RotatingAuthorityOptions = {}): RotatingAuthority {
  if (store.current() === undefined) throw new AuthorityPinnedError('the authority store has no key')
  let signer: Signer | undefined
  let signerGeneration = -1
  const currentSigner = (): Signer => {
    const state = store.current()!
    if (signer === undefined || state.generation !== signerGeneration) {
      signer = createSigner({ secret: state.seed })
      signerGeneration = state.generation
    }
    return signer
  }
  const lock = options.lock ?? (<T>(_mode: 'shared' | 'exclusive', fn: () => Promise<T>) => fn())
  let tail: Promise<unknown> = Promise.resolve()
  const queue = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
  const status = (): AuthorityStatus => {
    const state = store.current()!
    return { publicKey: state.publicKey, generation: state.generation, rotatedAt: state.rotatedAt, trustedPublicKeys: store.trustedPublicKeys() }
  }
  return {
    signer: currentSigner,
    status,
    exclusive: fn =>
      queue(() =>
        lock('shared', async () => {
          await options.refresh?.()
          return fn()
        }),
      ),
    rotate: () =>
      queue(() =>
        lock('exclusive', async () => {
          if (options.pinnedReason !== undefined) throw new AuthorityPinnedError(options.pinnedReason)
          await options.refresh?.()
          await options.beforeRotate?.(currentSigner())
          await store.rotate(generateSecret('ed25519'))
          return status()
        }),
      ),
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
export function createRevoker(stores: Pick<TrustStores, 'revocations' | 'capabilities'>, receipts: ReceiptWriter, authority: RotatingAuthority, now: () => number): RevocationPort {
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
export function mountTrustRoutes(router: Router, deps: TrustDeps, options: TrustRouteOptions = {}): { engine: ReceiptQueryEngine; rollup: AnalyticsRollup } {
  const engine = options.engine ?? createQueryEngine(deps)
  const rollup = options.rollup ?? new AnalyticsRollup(deps.corpus, { log: deps.log })
  for (const route of createTrustRoutes(deps, { ...options, engine, rollup })) router.add(route.method, route.path, route.handler)
  return { engine, rollup }
}
