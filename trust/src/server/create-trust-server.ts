// Trust-control as a service (`gate trust serve`, spec 03): receipt query, analytics, operator report,
// tool and child receipts, authority status and rotation, capability issuance and revocation, the
// transparency log, and for a fleet receipt ingest, key enrolment, the revocation feed and central
// budget captures. State lives in the SQLite files of one host or in one PostgreSQL database any number
// of nodes share (docs/postgres.md), where each node also runs the cluster heartbeat. The order of a
// start: the listen check (a failed start creates no files), the stores, the authority key, the
// receipt writer and transparency log, the routes, the listener, then the cluster node.
import { NotFoundError } from '@gate/sdk'
import { sendTrustError } from '@gate/sdk/server'
import { ServiceStartingError } from '../errors.js'
import { bindAuthority, createRotatingAuthority } from '../authority.js'
import { createTrustAuthenticator } from '../auth.js'
import { createIngestPort } from '../fleet/receipt-ingest.js'
import { createRevocationFeed } from '../fleet/revocation-notifier.js'
import { TRUST_RESPONSE_HEADERS, withTrustHeaders } from '../routes/route-table.js'
import { createIssuer, createRevoker, createTrustDeps, mountTrustRoutes } from '../trust-wiring.js'
import { ClusterNode } from './cluster-node.js'
import type { HostRoute, TransparencyService, TrustListener } from './host-ports.js'
import { methodNotAllowedRoutes } from './method-not-allowed.js'
import { storeCoreForms } from './store-core-forms.js'
import { openPostgresBackend, openSqliteBackend, type TrustBackend } from './trust-backend.js'
import { resolveTrustOptions, type TrustOptions } from './trust-server-options.js'

/** A running trust-control. */
export interface TrustServer {
  /** `http(s)://host:port` as bound. */
  url: string
  inFlight(): number
  /** Drains in-flight requests (at most `graceMs`), leaves the cluster, checkpoints the log and closes the stores. */
  close(graceMs?: number): Promise<void>
}

const CHECKPOINT_ON_CLOSE_TIMEOUT_MS = 5000

/** Starts trust-control with `options` (checked first: gate_invalid_config names a bad one). */
export async function createTrustServer(options: TrustOptions): Promise<TrustServer> {
  const config = resolveTrustOptions(options)
  const { host, store, cluster } = config
  const { log, metrics } = host
  const auth = createTrustAuthenticator({ serviceToken: config.serviceToken, tenantTokens: config.tenantTokens })
  await host.checkListen()
  const backend: TrustBackend =
    store.kind === 'sqlite'
      ? await openSqliteBackend(host, { receiptDb: store.receiptDb, revocationDb: store.revocationDb, budgetDb: store.budgetDb, authorityDb: store.authorityDb, log })
      : await openPostgresBackend({ url: store.url, poolSize: store.poolSize, log })
  const { stores } = backend
  let transparency: TransparencyService | undefined
  let listener: TrustListener | undefined
  let clusterNode: ClusterNode | undefined
  // a start that fails part way leaves nothing open behind it
  const closeAll = async () => {
    await listener?.drain(0).catch(() => undefined)
    await clusterNode?.stop().catch(() => undefined)
    await transparency?.close().catch(() => undefined)
    await backend.close().catch(() => undefined)
  }
  try {
    await bindAuthority(stores.authority, config.authoritySeed, config.authoritySeedSource)
    const authority = createRotatingAuthority(stores.authority, {
      // what the retiring key signed gets its core form while the key can still sign (store-core-forms.ts)
      beforeRotate: async retiring => {
        const started = Date.now()
        const { stored, unverified } = await storeCoreForms(stores.receipts, retiring, {
          trustedKeys: stores.authority.trustedPublicKeys(),
          log,
          onUnverified: step => metrics?.recordUnverifiedReceipt('rotation', step),
        })
        log(`rotation: stored the core form of ${stored} receipt(s) signed by the retiring key${unverified === 0 ? '' : `, refused ${unverified} that do not verify`} (${Date.now() - started} ms)`)
      },
      pinnedReason: config.authoritySeed === undefined ? undefined : `the signing key is pinned by ${config.authoritySeedSource}; run with an authority store to rotate`,
      ...backend.authorityHooks,
    })
    const now = () => Math.floor(Date.now() / 1000)
    const ingest = createIngestPort({ stores, enrolledKeys: backend.enrolledKeys, authority, appendSkipsDuplicates: backend.appendSkipsDuplicates })
    const receipts = await host.startReceipts({
      receipts: stores.receipts,
      signer: () => authority.signer(),
      openTransparencyBackend: () => backend.openTransparencyBackend(),
      // a row another process or node appended becomes a leaf only when signed by a key ingest accepts too
      acceptedSigners: keys => ingest.acceptedSigners(keys),
      log,
    })
    transparency = receipts.transparency
    // The listener is bound before the routes exist (a node's cluster id defaults to the URL it bound):
    // until they are all mounted, every request answers 503, never a 404 that reads as "no such route".
    let ready = false
    listener = await host.serve({
      // spec 03 error bodies everywhere on this service, unknown routes included
      fallback: (req, res, url) => {
        for (const [name, value] of Object.entries(TRUST_RESPONSE_HEADERS)) res.setHeader(name, value)
        sendTrustError(res, ready ? new NotFoundError(`route ${req.method ?? 'GET'} ${url.pathname}`) : new ServiceStartingError())
      },
      storeHealth: () => ({ receipts: stores.receipts.log.healthy, budgets: stores.budgets.healthy }),
    })
    log(`starting: bound ${listener.url}; requests answer 503 until every route is mounted`)
    // A node of a fleet: heartbeats, the cluster block, quorum for writes, the peer status route. Its
    // id defaults to the URL just bound, so it starts once the server listens, before any route exists.
    if (backend.postgres !== undefined) {
      const pg = backend.postgres
      clusterNode = new ClusterNode({
        store: pg.cluster,
        selfUrl: cluster.advertiseUrl ?? listener.url,
        // spec 03: the membership is fixed at start unless discovery was asked for
        configuredPeers: cluster.discoverPeers ? undefined : cluster.peers,
        syncIntervalMs: cluster.syncIntervalMs,
        serviceToken: config.serviceToken,
        authorityGeneration: () => pg.authority.current()?.generation ?? 0,
        refreshAuthority: () => pg.authority.refresh(),
        // peers sign with the shared authority key: a hybrid one needs peers that accept hybrids
        requiredFeatures: () => ((pg.authority.current()?.publicKey ?? '').startsWith('hybrid:') ? ['accepts_hybrid_signatures'] : []),
        log,
      })
      await clusterNode.start()
    }
    const node = clusterNode
    const revocationFeed = createRevocationFeed(stores, createRevoker(stores, receipts.writer, authority, now), authority)
    const deps = createTrustDeps({
      stores,
      listedBackend: backend.listedBackend,
      auth,
      // a rotation through POST /v1/authority also answers the sidecars' held feed requests
      authority: revocationFeed.authority,
      issuer: createIssuer(stores, authority, now),
      revocations: revocationFeed.revoker,
      revocationFeed: revocationFeed.feed,
      transparency,
      ingest,
      budgetCapture: { capture: (plan, options) => stores.budgets.capture(plan, options), cancel: captureId => stores.budgets.cancel(captureId) },
      cluster: node,
      available: node === undefined ? undefined : () => node.databaseReachable,
      now,
      log,
      onUnverifiedReceipt: step => metrics?.recordUnverifiedReceipt('read', step),
    })
    const routes: HostRoute[] = []
    const { rollup } = mountTrustRoutes({ add: (method, path, handler) => routes.push({ method, path, handler }) }, deps)
    if (metrics !== undefined) routes.push({ method: 'GET', path: '/metrics', handler: withTrustHeaders(metrics.createRoute(auth)) })
    for (const route of [...routes, ...methodNotAllowedRoutes(routes)]) listener.add(route)
    ready = true
    // Analytics over the whole corpus reads an in-memory rollup; fold the stored receipts in now, in the
    // background (requests meanwhile wait for it, or aggregate in SQL when they filter receipts).
    const warmStarted = Date.now()
    if (rollup === undefined) {
      deps.corpus.latestSeq().then(
        seq => log(`analytics rollup ready through seq ${seq} (0 ms): per-hour rollups kept at ingest by the store`),
        err => log(`analytics rollup failed: ${(err as Error).message}`),
      )
    } else rollup.warm().then(
      () => log(`analytics rollup ready through seq ${rollup.through} (${Date.now() - warmStarted} ms)`),
      err => log(`analytics rollup failed: ${(err as Error).message}`),
    )
    const status = authority.status()
    for (const line of backend.describe()) log(line)
    log(`authority: generation ${status.generation}, public key ${status.publicKey}, ${status.trustedPublicKeys.length} trusted key(s)${config.authoritySeed === undefined ? '' : ` (pinned by ${config.authoritySeedSource})`}`)
    log(`transparency log: ${transparency === undefined ? 'off (--no-transparency-log)' : `tree and checkpoints in ${transparency.location}`}`)
    log(`tokens: service token ${config.tokenSource}, ${config.tenantTokens.size} tenant token(s)`)
    log(`metrics: ${metrics === undefined ? 'off (--no-metrics)' : `GET /metrics (${metrics.readers})`}`)
    if (clusterNode !== undefined) {
      const block = clusterNode.block()
      log(`cluster: node ${block.selfUrl}, ${block.peerCount} peer(s) ${cluster.discoverPeers ? 'seen in the heartbeat table (--cluster-discover-peers)' : 'configured'}, quorum ${block.quorumSize}, lease ${clusterNode.leaseMs} ms`)
    }
    const serving = listener
    log(`listening on ${serving.url}`)
    return {
      url: serving.url,
      inFlight: () => serving.inFlight(),
      async close(graceMs = 25_000) {
        await serving.drain(graceMs)
        await node?.stop()
        await transparency?.flush(CHECKPOINT_ON_CLOSE_TIMEOUT_MS).catch(err => log(`transparency log: final checkpoint failed: ${(err as Error).message}`))
        await transparency?.close()
        await backend.close()
      },
    }
  } catch (err) {
    await closeAll()
    throw err
  }
}
