// `gate trust serve`: the trust-control service (spec 03): receipt query, analytics, operator report,
// tool and child receipts, authority status and rotation, capability issuance and revocation, and for a
// fleet receipt ingest, key enrolment and central budget captures. State lives in the SQLite files a
// sidecar writes (one host) or in one PostgreSQL database any number of nodes share (--database-url;
// docs/postgres.md). Admin service token from --service-token-file or GATE_CONTROL_TOKEN; per-tenant read
// tokens from --tenant-token TENANT=FILE. Usage errors exit 2, startup failures exit 1; SIGTERM drains,
// flushes the receipt log and closes the stores.
import { readFile, stat } from 'node:fs/promises'
import { createSigner, generateSecret, hexToBytes, MethodNotAllowedError, NotFoundError } from '@gate/sdk'
import { sendTrustError } from '@gate/sdk/server'
import { createTrustAuthenticator, TRUST_RESPONSE_HEADERS, withTrustHeaders } from '@gate/trust'
import { ConfigError, UsageError } from '../errors.js'
import { formatBaseUrl, parseListenAddress } from '../config/listen-address.js'
import { checkCanListen, listenFailure } from '../config/listen-check.js'
import { loadTls, readTlsFlags, TLS_FLAG_OPTIONS, TLS_FLAGS_HELP } from '../config/tls-flags.js'
import { LISTENER_TIMEOUT_FLAG_OPTIONS, LISTENER_TIMEOUT_FLAGS_HELP, readListenerTimeouts } from '../config/listener-timeouts.js'
import { Router } from '../http/router.js'
import { createGateServer } from '../http/server.js'
import { createInlineReceiptWriter, isInMemoryPath, type TrustStores } from '../stores/index.js'
import { checkDatabaseUrl } from '../stores/postgres/index.js'
import { storeCoreForms } from '../app/store-core-forms.js'
import { ClusterNode, CLUSTER_SYNC_INTERVAL_MS } from '../app/cluster-node.js'
import { createBudgetCapturePort, createIngestPort, createRevocationFeed } from '../app/fleet-wiring.js'
import { openPostgresBackend, openSqliteBackend, type TrustBackend } from '../app/trust-backend.js'
import { createIssuer, createRevoker, createRotatingAuthority, createTrustDeps, mountTrustRoutes } from '../app/trust-wiring.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { readTransparencyFlags, TRANSPARENCY_FLAG_OPTIONS, TRANSPARENCY_FLAGS_HELP } from '../config/transparency-flags.js'
import { OBSERVABILITY_FLAG_OPTIONS, OBSERVABILITY_FLAGS_HELP, readObservabilityFlags } from '../config/observability-flags.js'
import { createGateLogger, errorFields, lineLogger } from '../observability/logger.js'
import { createGateMetrics } from '../observability/metrics.js'
import { instrumentReceiptWriter } from '../observability/instrumented-writer.js'
import { createRouteObserver, serverSources } from '../observability/http-metrics.js'
import { registerTransparencyMetrics } from '../observability/transparency-metrics.js'
import { createMetricsRoute } from '../routes/metrics.js'
import { packageVersion } from '../app/create-service.js'

/** Trust-control's default listen address: the sidecar's port + 1, loopback. */
export const TRUST_DEFAULT_LISTEN = '127.0.0.1:9091'

export const TRUST_SERVE_USAGE = `Usage: gate trust serve (--receipt-db PATH | --database-url URL) (--service-token-file PATH | GATE_CONTROL_TOKEN)
                       [--listen ADDR] [--authority-seed-file PATH | --authority-db PATH]
                       [--revocation-db PATH] [--budget-db PATH] [--tenant-token TENANT=FILE ...]
                       [--advertise-url URL] [--cluster-peer URL ...] [--tls-cert PATH --tls-key PATH]

Serves trust-control: GET /v1/receipts/query, /v1/agents/{subject_key}/receipts, /v1/receipts/analytics,
/v1/reports/operator, GET/POST /v1/receipts/tools and /v1/receipts/children, GET/POST /v1/authority,
POST /v1/capabilities/issue and /v1/revocations, the transparency log's GET /v1/receipts/{id}/proof and
GET/POST /v1/checkpoints..., POST /v1/receipts/ingest, POST /v1/keys/enroll, GET /v1/keys,
POST /v1/budgets/capture, GET /health (no auth) and, with --database-url, GET /v1/internal/cluster/status
(peer-authenticated, gate.cluster.peer.v1).
Every /v1 route needs Authorization: Bearer <token>. The service token reads and writes everything; a
tenant token reads only receipts whose caller tenant is its tenant, and only through the receipt query,
agent and tool-receipt routes.

State (one of):
  --receipt-db PATH           the SQLite receipt store of one host (e.g. the --receipt-store of gate sidecar).
                              Issued capabilities (the agent lineage) are read from its sibling
                              PATH-stem.capabilities.db
  --database-url URL          PostgreSQL (postgres://user:password@host:port/database?sslmode=verify-full),
                              shared by any number of nodes; also GATE_DATABASE_URL (preferred: keeps the
                              password off argv). Migrations run at start (gate trust migrate runs them alone)

Options:
  --listen ADDR               listen address (default ${TRUST_DEFAULT_LISTEN}; port 0 picks a free port)
  --revocation-db PATH        SQLite revocation store (default: beside the receipt store)
  --budget-db PATH            SQLite budget store (default: beside the receipt store)
  --authority-seed-file PATH  sign with this Ed25519 seed (64 hex; gate keygen PATH). The key is recorded in
                              the authority store (or the database) so earlier keys stay trusted; rotation is
                              refused (the file pins the key)
  --authority-db PATH         SQLite authority store holding the signing key (created with a fresh key when
                              empty); POST /v1/authority rotates it. Default when neither is given:
                              beside the receipt store. With --database-url the key is in the database
  --service-token-file PATH   file holding the admin service token (at least 16 characters); else the
                              GATE_CONTROL_TOKEN environment variable. Tokens are never taken from argv.
                              Every node of a cluster uses the same one (peer authentication digests it)
  --tenant-token TENANT=FILE  a read token for tenant TENANT (the CallerIdentity.tenant of its receipts),
                              read from FILE (repeatable)
${LISTENER_TIMEOUT_FLAGS_HELP}
  -h, --help                  show this help

Cluster (with --database-url; docs/postgres.md):
  --advertise-url URL         this node's URL as its peers and load balancer reach it; its node id
                              (default: the URL it listens on)
  --cluster-peer URL          another node's advertise URL (repeatable): the fixed membership quorum is
                              counted over, and the peer-auth allowlist. Without any, the nodes seen in the
                              database's heartbeat table are the membership
  --cluster-sync-interval-ms N  heartbeat interval (default ${CLUSTER_SYNC_INTERVAL_MS}); the lease is 3x, clamped to 0.5-5 s
  --database-pool-size N      most database connections of this node's requests (default 10); the
                              heartbeat has one more of its own

${TLS_FLAGS_HELP}

${TRANSPARENCY_FLAGS_HELP}

${OBSERVABILITY_FLAGS_HELP}`

const FLAG_OPTIONS = {
  listen: { type: 'string' },
  'receipt-db': { type: 'string' },
  'database-url': { type: 'string' },
  'database-pool-size': { type: 'string' },
  'revocation-db': { type: 'string' },
  'budget-db': { type: 'string' },
  'authority-seed-file': { type: 'string' },
  'authority-db': { type: 'string' },
  'service-token-file': { type: 'string' },
  'tenant-token': { type: 'string', multiple: true },
  'advertise-url': { type: 'string' },
  'cluster-peer': { type: 'string', multiple: true },
  'cluster-sync-interval-ms': { type: 'string' },
  ...TLS_FLAG_OPTIONS,
  ...TRANSPARENCY_FLAG_OPTIONS,
  ...LISTENER_TIMEOUT_FLAG_OPTIONS,
  ...OBSERVABILITY_FLAG_OPTIONS,
} as const

const TENANT_TOKEN_FLAG = /^([^=]+)=(.+)$/
const POSITIVE_INT = /^[1-9][0-9]{0,6}$/

export async function run(argv: string[]): Promise<number> {
  // `gate trust serve ...` reaches here with argv after `serve`; `gate trust` alone lands here too.
  return runWithExitCodes('trust serve', TRUST_SERVE_USAGE, async () => {
    const { values } = parseFlags(argv, FLAG_OPTIONS)
    if (values.help === true) {
      process.stdout.write(TRUST_SERVE_USAGE + '\n')
      return 0
    }
    const server = await startTrustServer(values)
    await server.stopped
    return 0
  })
}

interface TrustServer {
  url: string
  stopped: Promise<void>
}

async function startTrustServer(values: Record<string, unknown>): Promise<TrustServer> {
  const observability = readObservabilityFlags(values)
  // JSON lines escape every control character: no value can drive the terminal (docs/security.md)
  const logger = createGateLogger('gate trust serve', observability.logLevel)
  const log = lineLogger(logger)
  // (1) usage: everything checkable without touching a file or the network
  const receiptDb = values['receipt-db'] as string | undefined
  const envUrl = process.env.GATE_DATABASE_URL
  const databaseUrl = (values['database-url'] as string | undefined) ?? (envUrl === '' ? undefined : envUrl)
  if (databaseUrl !== undefined && receiptDb !== undefined) throw new UsageError('--receipt-db and --database-url are mutually exclusive (GATE_DATABASE_URL counts as --database-url)')
  if (databaseUrl === undefined && (receiptDb === undefined || isInMemoryPath(receiptDb))) {
    throw new UsageError('--receipt-db PATH (a durable SQLite receipt store) or --database-url URL (PostgreSQL) is required')
  }
  if (databaseUrl !== undefined) {
    try {
      checkDatabaseUrl(databaseUrl, '--database-url')
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
    for (const flag of ['revocation-db', 'budget-db', 'authority-db']) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} is a SQLite store: with --database-url every store is in the database`)
    }
  } else {
    for (const flag of ['advertise-url', 'cluster-peer', 'cluster-sync-interval-ms', 'database-pool-size']) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} needs --database-url: a SQLite trust-control is one node`)
    }
  }
  const seedFile = values['authority-seed-file'] as string | undefined
  const authorityDb = values['authority-db'] as string | undefined
  if (seedFile !== undefined && authorityDb !== undefined) throw new UsageError('--authority-seed-file and --authority-db are mutually exclusive')
  const listen = parseListenAddress((values.listen as string | undefined) ?? TRUST_DEFAULT_LISTEN)
  const tlsSettings = readTlsFlags(values, listen)
  const timeouts = readListenerTimeouts(values)
  const tenantFlags = ((values['tenant-token'] as string[] | undefined) ?? []).map(flag => {
    const match = TENANT_TOKEN_FLAG.exec(flag)
    if (match === null) throw new UsageError(`--tenant-token must be TENANT=FILE, got "${flag}"`)
    return { tenant: match[1]!, file: match[2]! }
  })
  const cluster = readClusterFlags(values)
  const transparencySettings = readTransparencyFlags(values)
  const tokenFile = values['service-token-file'] as string | undefined
  const envToken = process.env.GATE_CONTROL_TOKEN
  if (tokenFile === undefined && (envToken === undefined || envToken === '')) {
    throw new UsageError('an admin service token is required: --service-token-file PATH or the GATE_CONTROL_TOKEN environment variable')
  }

  // (2) tokens, then the authenticator (validated once, here); TLS files
  const serviceToken = tokenFile === undefined ? envToken! : await readSecretFile(tokenFile, '--service-token-file')
  const tenantTokens = new Map<string, string>()
  for (const { tenant, file } of tenantFlags) {
    if (tenantTokens.has(tenant)) throw new UsageError(`--tenant-token names tenant "${tenant}" twice`)
    tenantTokens.set(tenant, await readSecretFile(file, `--tenant-token ${tenant}`))
  }
  const auth = createTrustAuthenticator({ serviceToken, tenantTokens })
  const tls = await loadTls(tlsSettings)

  // (3) stores and authority, once the address is known to be free (a failed start creates no files)
  const seed = seedFile === undefined ? undefined : await readSeedFile(seedFile)
  await checkCanListen(listen)
  const backend: TrustBackend =
    databaseUrl === undefined
      ? await openSqliteBackend({ receiptDb: receiptDb!, revocationDb: values['revocation-db'] as string | undefined, budgetDb: values['budget-db'] as string | undefined, authorityDb, log })
      : await openPostgresBackend({ url: databaseUrl, poolSize: cluster.poolSize, log })
  const stores = backend.stores
  try {
    await bindAuthority(stores, seed, seedFile)
  } catch (err) {
    await backend.close().catch(() => undefined)
    throw err
  }

  // (4) routes and server
  const authority = createRotatingAuthority(stores.authority, {
    beforeRotate: async retiring => {
      const started = Date.now()
      const { stored, unverified } = await storeCoreForms(stores.receipts, retiring, {
        trustedKeys: stores.authority.trustedPublicKeys(),
        log,
        onUnverified: step => metrics?.recordUnverifiedReceipt('rotation', step),
      })
      log(`rotation: stored the core form of ${stored} receipt(s) signed by the retiring key${unverified === 0 ? '' : `, refused ${unverified} that do not verify`} (${Date.now() - started} ms)`)
    },
    pinnedReason: seed === undefined ? undefined : 'the signing key is pinned by --authority-seed-file; run with --authority-db to rotate',
    ...backend.authorityHooks,
  })
  const now = () => Math.floor(Date.now() / 1000)
  const metrics = observability.metrics ? createGateMetrics({ service: 'gate trust serve', version: await packageVersion() }) : undefined
  const inlineWriter = createInlineReceiptWriter({ signer: () => authority.signer(), log: stores.receipts.log })
  const receipts = metrics === undefined ? inlineWriter : instrumentReceiptWriter(inlineWriter, metrics)
  const ingest = createIngestPort({ stores, enrolledKeys: backend.enrolledKeys, authority, appendSkipsDuplicates: backend.appendSkipsDuplicates })
  let transparency
  try {
    transparency = await backend.startTransparency({
      writer: receipts,
      settings: transparencySettings,
      signer: () => authority.signer(),
      // a row another process or node appended becomes a leaf only when signed by a key ingest accepts too
      acceptedSigners: keys => ingest.acceptedSigners(keys),
      onUnverified: step => metrics?.recordUnverifiedReceipt('checkpoint', step),
      log,
    })
  } catch (err) {
    await backend.close().catch(() => undefined)
    throw err
  }
  const router = new Router()
  const server = createGateServer({
    router,
    tls,
    timeouts,
    // spec 03 error bodies everywhere on this service, unknown routes included
    fallback: (req, res, url) => {
      for (const [name, value] of Object.entries(TRUST_RESPONSE_HEADERS)) res.setHeader(name, value)
      sendTrustError(res, new NotFoundError(`route ${req.method ?? 'GET'} ${url.pathname}`))
    },
    onError: err => logger.error({ event: 'request_failed', ...errorFields(err) }, 'request failed'),
    onRoute: metrics === undefined ? undefined : createRouteObserver(metrics),
  })
  metrics?.setSources({ storeHealth: () => ({ receipts: stores.receipts.log.healthy, budgets: stores.budgets.healthy }), ...serverSources(server) })
  if (metrics !== undefined && transparency !== undefined) {
    // a status that cannot be read now leaves the gauges out, never the start
    await registerTransparencyMetrics(metrics.registry, () => transparency.status()).catch(err => log(`warning: transparency log metrics unavailable: ${(err as Error).message}`))
  }
  const closeAll = async () => {
    await transparency?.close().catch(() => undefined)
    await backend.close().catch(() => undefined)
  }
  let address
  try {
    address = await server.listen(listen.host, listen.port)
  } catch (err) {
    await closeAll()
    throw listenFailure(listen, err)
  }
  const url = formatBaseUrl(address.address, address.port).replace(/^http:/, tls === undefined ? 'http:' : 'https:')
  // A node of a fleet: heartbeats, the cluster block, quorum for writes, the peer status route.
  let clusterNode: ClusterNode | undefined
  if (backend.postgres !== undefined) {
    const pg = backend.postgres
    clusterNode = new ClusterNode({
      store: pg.cluster,
      selfUrl: cluster.advertiseUrl ?? url,
      configuredPeers: cluster.peers,
      syncIntervalMs: cluster.syncIntervalMs,
      serviceToken,
      authorityGeneration: () => pg.authority.current()?.generation ?? 0,
      refreshAuthority: () => pg.authority.refresh(),
      log,
    })
    await clusterNode.start()
  }
  const revocationFeed = createRevocationFeed(stores, createRevoker(stores, receipts, authority, now), authority)
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
    budgetCapture: createBudgetCapturePort(stores),
    cluster: clusterNode,
    available: clusterNode === undefined ? undefined : () => clusterNode.databaseReachable,
    now,
    log,
    onUnverifiedReceipt: step => metrics?.recordUnverifiedReceipt('read', step),
  })
  const { rollup } = mountTrustRoutes(router, deps)
  if (metrics !== undefined) router.add('GET', '/metrics', withTrustHeaders(createMetricsRoute({ metrics, auth, scrapeToken: observability.scrapeToken, sendFailure: sendTrustError })))
  addMethodNotAllowed(router)
  // Analytics over the whole corpus reads an in-memory rollup; fold the stored receipts in now, in the
  // background (requests meanwhile wait for it, or aggregate in SQL when they filter receipts).
  const warmStarted = Date.now()
  rollup.warm().then(
    () => log(`analytics rollup ready through seq ${rollup.through} (${Date.now() - warmStarted} ms)`),
    err => log(`analytics rollup failed: ${(err as Error).message}`),
  )
  const status = authority.status()
  for (const line of backend.describe()) log(line)
  log(`authority: generation ${status.generation}, public key ${status.publicKey}, ${status.trustedPublicKeys.length} trusted key(s)${seed === undefined ? '' : ' (pinned by --authority-seed-file)'}`)
  log(`transparency log: ${transparency === undefined ? 'off (--no-transparency-log)' : `tree and checkpoints in ${transparency.backend.location}`}`)
  log(`tokens: service token${tokenFile === undefined ? ' from GATE_CONTROL_TOKEN' : ' from --service-token-file'}, ${tenantTokens.size} tenant token(s)`)
  log(`metrics: ${metrics === undefined ? 'off (--no-metrics)' : `GET /metrics (service token${observability.scrapeToken === undefined ? '' : ' or GATE_METRICS_TOKEN'})`}`)
  if (clusterNode !== undefined) {
    const block = clusterNode.block()
    log(`cluster: node ${block.selfUrl}, ${block.peerCount} peer(s) ${cluster.peers === undefined ? 'seen in the heartbeat table' : 'configured'}, quorum ${block.quorumSize}, lease ${clusterNode.leaseMs} ms`)
  }
  if (tls === undefined && tlsSettings.allowPlaintextRemote) log('transport: plaintext on a non-loopback address (--allow-plaintext-remote)')
  log(`listening on ${url}`)

  const stopped = new Promise<void>(resolve => {
    const stop = (signal: string) => {
      logger.info({ event: 'shutdown', signal }, `${signal} received, draining ${server.inFlight()} in-flight request(s)`)
      void (async () => {
        try {
          await server.drain(25_000)
          await clusterNode?.stop()
          await transparency?.flush(5000).catch(err => log(`transparency log: final checkpoint failed: ${(err as Error).message}`))
          await transparency?.close()
          await backend.close()
          logger.info({ event: 'stopped' }, 'stores flushed, stopped')
        } catch (err) {
          logger.error({ event: 'shutdown_failed', ...errorFields(err) }, `shutdown failed: ${(err as Error).message}`)
          process.exitCode = 1
        }
        resolve()
      })()
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
  return { url, stopped }
}

interface ClusterFlags {
  advertiseUrl: string | undefined
  peers: string[] | undefined
  syncIntervalMs: number
  poolSize: number | undefined
}

function readClusterFlags(values: Record<string, unknown>): ClusterFlags {
  const url = (flag: string, value: string): string => {
    let parsed: URL
    try {
      parsed = new URL(value)
    } catch {
      throw new UsageError(`${flag} must be an http(s) URL (scheme, host and port), got "${value}"`)
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '') {
      throw new UsageError(`${flag} must be an http(s) URL (scheme, host and port), got "${value}"`)
    }
    return parsed.origin
  }
  const advertise = values['advertise-url'] as string | undefined
  const peerValues = values['cluster-peer'] as string[] | undefined
  const int = (flag: string): number | undefined => {
    const raw = values[flag] as string | undefined
    if (raw === undefined) return undefined
    if (!POSITIVE_INT.test(raw)) throw new UsageError(`--${flag} must be a positive integer, got "${raw}"`)
    return Number(raw)
  }
  const advertiseUrl = advertise === undefined ? undefined : url('--advertise-url', advertise)
  const peers = peerValues?.map(p => url('--cluster-peer', p))
  if (peers !== undefined && advertiseUrl !== undefined && peers.includes(advertiseUrl)) throw new UsageError('--cluster-peer lists this node\'s own --advertise-url')
  return { advertiseUrl, peers, syncIntervalMs: int('cluster-sync-interval-ms') ?? CLUSTER_SYNC_INTERVAL_MS, poolSize: int('database-pool-size') }
}

// The authority store is the source of truth for the trusted keys. With a seed file its key is made
// current (recorded as a new generation when it differs), unless an earlier generation already used it:
// going back to a retired key is refused. Without one, the store's key is used, created when empty.
async function bindAuthority(stores: Pick<TrustStores, 'authority'>, seed: Uint8Array | undefined, seedFile: string | undefined): Promise<void> {
  if (seed === undefined) {
    await stores.authority.ensureKey(() => createSeed())
    return
  }
  const publicKey = createSigner({ secret: seed }).publicKey
  if (stores.authority.current()?.publicKey === publicKey) return
  if (stores.authority.trustedPublicKeys().includes(publicKey)) {
    throw new ConfigError(`the key of --authority-seed-file ${seedFile} was retired by a later generation in ${stores.authority.path}; refusing to sign with it again`)
  }
  await stores.authority.rotate(seed)
}

function createSeed(): Uint8Array {
  return generateSecret('ed25519')
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

// The other methods of every trust path answer 405 in the spec 03 body form (with an Allow header).
function addMethodNotAllowed(router: Router): void {
  for (const path of TRUST_PATHS) {
    const allowed = METHODS.filter(method => router.lookup(method, concretePath(path)).kind === 'found')
    // a route this process does not mount (/metrics under --no-metrics, the cluster status on SQLite) stays a 404
    if (allowed.length === 0) continue
    for (const method of METHODS) {
      if (allowed.includes(method)) continue
      router.add(
        method,
        path,
        withTrustHeaders((req, res, _params, url) => {
          res.setHeader('allow', allowed.join(', '))
          sendTrustError(res, new MethodNotAllowedError(req.method ?? method, url.pathname))
        }),
      )
    }
  }
}

const TRUST_PATHS = [
  '/health',
  '/metrics',
  '/ui',
  '/ui/:asset',
  '/v1/receipts/ingest',
  '/v1/keys/enroll',
  '/v1/keys',
  '/v1/budgets/capture',
  '/v1/internal/cluster/status',
  '/v1/authority',
  '/v1/capabilities/issue',
  '/v1/revocations',
  '/v1/receipts/query',
  '/v1/agents/:subject_key/receipts',
  '/v1/receipts/analytics',
  '/v1/reports/operator',
  '/v1/receipts/tools',
  '/v1/receipts/children',
  '/v1/receipts/:receipt_id',
  '/v1/receipts/:receipt_id/proof',
  '/v1/checkpoints',
  '/v1/checkpoints/latest',
  '/v1/checkpoints/status',
  '/v1/checkpoints/consistency',
  '/v1/checkpoints/:tree_size',
]

function concretePath(path: string): string {
  return path.replace(/:[a-z_]+/g, 'x')
}

async function readSeedFile(path: string): Promise<Uint8Array> {
  const text = await readSecretFile(path, '--authority-seed-file')
  const seed = hexToBytes(text.toLowerCase())
  if (seed === undefined || seed.length !== 32) throw new ConfigError(`--authority-seed-file ${path} must contain 64 hex characters (an Ed25519 seed)`)
  return seed
}

// A secret from a file, trimmed; a file others can read is warned about (never its content).
async function readSecretFile(path: string, flag: string): Promise<string> {
  let text: string
  try {
    text = (await readFile(path, 'utf8')).trim()
  } catch (err) {
    throw new ConfigError(`cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err)
  }
  if (text === '') throw new ConfigError(`${flag} ${path} is empty`)
  const mode = (await stat(path)).mode & 0o777
  if ((mode & 0o077) !== 0) process.emitWarning(`${flag} ${path} is readable by others (mode ${mode.toString(8)}); chmod 600 it`)
  return text
}
