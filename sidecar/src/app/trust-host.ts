// What `gate trust serve` lends @gate/trust's server (its TrustServerHost port): the process's HTTP server
// and router, its SQLite stores for a one-host trust-control, the inline receipt writer and the
// transparency log that follows it, metrics and the JSON-lines log, each configured from the command's
// flags (config/trust-serve-flags.ts). Trust-control's own parts are built by createTrustServer.
import { publicKeyOfKeyBytes } from '@gate/sdk'
import { sendTrustError } from '@gate/sdk/server'
import type { SqliteStoresRequest, SqliteTrustStores, TrustServerHost } from '@gate/trust/server'
import { formatBaseUrl, type ListenAddress } from '../config/listen-address.js'
import { checkCanListen, listenFailure } from '../config/listen-check.js'
import type { ListenerTimeouts } from '../config/listener-timeouts.js'
import type { ObservabilitySettings } from '../config/observability-flags.js'
import type { TransparencySettings } from '../config/transparency-flags.js'
import { Router } from '../http/router.js'
import { createGateServer } from '../http/server.js'
import { createRouteObserver, serverSources } from '../observability/http-metrics.js'
import { instrumentReceiptWriter } from '../observability/instrumented-writer.js'
import { errorFields, lineLogger, type Logger } from '../observability/logger.js'
import { createGateMetrics } from '../observability/metrics.js'
import { registerTransparencyMetrics } from '../observability/transparency-metrics.js'
import { createMetricsRoute } from '../routes/metrics.js'
import { closeSqliteStores, createInlineReceiptWriter, openEnrolledKeyStore, openSqliteStores } from '../stores/index.js'
import { packageVersion } from './create-service.js'
import { sqliteTransparencyBackend, startTransparencyLog } from './transparency-wiring.js'

/** The host's configuration, read from the flags. */
export interface TrustHostSettings {
  listen: ListenAddress
  tls: { cert: Buffer; key: Buffer } | undefined
  /** Plaintext on a non-loopback address was asked for (said so in the log). */
  allowPlaintextRemote: boolean
  timeouts: ListenerTimeouts
  transparency: TransparencySettings
  observability: ObservabilitySettings
  logger: Logger
}

/** Receipts another process (a sidecar on the same file) or node appended are looked for this often too. */
const TRANSPARENCY_POLL_MS = 2000

export async function createTrustHost(settings: TrustHostSettings): Promise<TrustServerHost> {
  const { logger, listen, observability } = settings
  const log = lineLogger(logger)
  const gateMetrics = observability.metrics ? createGateMetrics({ service: 'gate trust serve', version: await packageVersion() }) : undefined
  return {
    log,
    checkListen: () => checkCanListen(listen),
    openSqliteStores: request => openSqliteTrustStores(request),
    async startReceipts(request) {
      const inline = createInlineReceiptWriter({ signer: request.signer, log: request.receipts.log })
      const writer = gateMetrics === undefined ? inline : instrumentReceiptWriter(inline, gateMetrics)
      const log = await startTransparencyLog({
        receipts: request.receipts,
        openBackend: request.openTransparencyBackend,
        writer,
        settings: settings.transparency,
        signer: request.signer,
        acceptedSigners: request.acceptedSigners,
        onUnverified: gateMetrics === undefined ? undefined : step => gateMetrics.recordUnverifiedReceipt('checkpoint', step),
        // other processes and nodes append to the same receipts without telling this one
        pollIntervalMs: TRANSPARENCY_POLL_MS,
        log: request.log,
      })
      if (gateMetrics !== undefined && log !== undefined) {
        // a status that cannot be read now leaves the gauges out, never the start
        await registerTransparencyMetrics(gateMetrics.registry, () => log.status()).catch(err => request.log(`warning: transparency log metrics unavailable: ${(err as Error).message}`))
      }
      if (log === undefined) return { writer, transparency: undefined }
      return {
        writer,
        transparency: {
          location: log.backend.location,
          status: () => log.status(),
          inclusionProof: (receiptId, treeSize) => log.inclusionProof(receiptId, treeSize),
          consistencyProof: (first, second) => log.consistencyProof(first, second),
          checkpoint: treeSize => log.checkpoint(treeSize),
          checkpoints: (afterSize, limit) => log.checkpoints(afterSize, limit),
          flush: timeoutMs => log.flush(timeoutMs),
          close: () => log.close(),
        },
      }
    },
    async serve(options) {
      const router = new Router()
      const server = createGateServer({
        router,
        tls: settings.tls,
        timeouts: settings.timeouts,
        fallback: options.fallback,
        onError: err => logger.error({ event: 'request_failed', ...errorFields(err) }, 'request failed'),
        onRouteDone: gateMetrics === undefined ? undefined : createRouteObserver(gateMetrics),
      })
      gateMetrics?.setSources({ storeHealth: options.storeHealth, ...serverSources(server) })
      let address
      try {
        address = await server.listen(listen.host, listen.port)
      } catch (err) {
        throw listenFailure(listen, err)
      }
      if (settings.tls === undefined && settings.allowPlaintextRemote) log('transport: plaintext on a non-loopback address (--allow-plaintext-remote)')
      return {
        url: formatBaseUrl(address.address, address.port).replace(/^http:/, settings.tls === undefined ? 'http:' : 'https:'),
        add: route => void router.add(route.method, route.path, route.handler),
        inFlight: () => server.inFlight(),
        drain: graceMs => server.drain(graceMs),
      }
    },
    metrics:
      gateMetrics === undefined
        ? undefined
        : {
            recordUnverifiedReceipt: (path, step) => gateMetrics.recordUnverifiedReceipt(path, step),
            createRoute: auth => createMetricsRoute({ metrics: gateMetrics, auth, scrapeToken: observability.scrapeToken, sendFailure: sendTrustError }),
            readers: `service token${observability.scrapeToken === undefined ? '' : ' or GATE_METRICS_TOKEN'}`,
          },
  }
}

// The SQLite stores of one host, with the enrolled keys and the indexes trust-control's queries need.
async function openSqliteTrustStores(request: SqliteStoresRequest): Promise<SqliteTrustStores> {
  const stores = await openSqliteStores({
    receiptDb: request.receiptDb,
    revocationDb: request.revocationDb,
    budgetDb: request.budgetDb,
    authorityDb: request.authorityDb,
    derivePublicKey: publicKeyOfKeyBytes,
  })
  try {
    const enrolledKeys = await openEnrolledKeyStore(stores.paths.capabilities, { now: () => Math.floor(Date.now() / 1000) })
    const started = Date.now()
    await stores.receipts.createTrustIndexes().catch(async err => {
      await enrolledKeys.close().catch(() => undefined)
      throw err
    })
    request.log(`receipt indexes ready (${Date.now() - started} ms)`)
    return {
      ...stores,
      enrolledKeys,
      openTransparencyBackend: sqliteTransparencyBackend(stores),
      describe: () => [`receipts: sqlite ${stores.paths.receipts} (${stores.receipts.log.driver})`],
      async close() {
        await enrolledKeys.close().catch(() => undefined)
        await closeSqliteStores(stores)
      },
    }
  } catch (err) {
    await closeSqliteStores(stores).catch(() => undefined)
    throw err
  }
}
