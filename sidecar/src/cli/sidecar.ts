// `gate sidecar`: the long-running localhost evaluator (spec 02). Refuses to start without durable
// receipts unless told otherwise (spec 01), logs what it serves, and on SIGTERM drains in-flight
// requests and flushes the receipt writer before exiting.
import { GLOBAL_FLAG_OPTIONS, GLOBAL_FLAGS_HELP } from '../config/global-flags.js'
import { parseServiceListenAddress } from '../config/listen-address.js'
import { checkCanListen } from '../config/listen-check.js'
import { LISTENER_TIMEOUT_FLAG_OPTIONS, LISTENER_TIMEOUT_FLAGS_HELP } from '../config/listener-timeouts.js'
import { LISTENER_HOST_FLAG_OPTIONS, LISTENER_HOST_FLAGS_HELP } from '../config/listener-hosts.js'
import { loadAuthority } from '../config/authority-seed.js'
import { provideServiceControlToken } from '../config/control-token.js'
import { readServiceConfig, SERVICE_DEFAULTS } from '../config/service-config.js'
import { loadPolicyFile } from '../app/load-policy.js'
import type { RouteTableOptions } from '@gate/openapi'
import { openServiceStores } from '../app/open-service-stores.js'
import { startService, type RunningService } from '../app/create-service.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { TRANSPARENCY_FLAG_OPTIONS, TRANSPARENCY_FLAGS_HELP, type TransparencySettings } from '../config/transparency-flags.js'
import { OBSERVABILITY_FLAG_OPTIONS, OBSERVABILITY_FLAGS_HELP } from '../config/observability-flags.js'
import { pino } from 'pino'
import { createGateLogger, errorFields, lineLogger, type Logger } from '../observability/logger.js'
import { createGateMetrics } from '../observability/metrics.js'
import { startTracing } from '../observability/tracing.js'
import type { Tracer } from '@opentelemetry/api'
import { packageVersion } from '../app/create-service.js'
import { FLEET_FLAG_OPTIONS, FLEET_FLAGS_HELP } from '../config/fleet-flags.js'
import { startFleetLink, type FleetLink } from '../fleet/fleet-link.js'
import { UsageError } from '../errors.js'

// Flags `gate sidecar` and `gate api protect` share, in two groups (api protect puts its upstream
// timeout between them).
export const SERVICE_STORE_FLAGS_HELP = `  --listen ADDR               listen address (default ${SERVICE_DEFAULTS.listen}), or unix:PATH for a Unix
                              socket (created 0600; SDKs then use sidecarUrl 'unix:PATH'); a port in
                              use stops the start before any store file is created
  --receipt-store PATH        SQLite receipt store; revocations, approvals, budgets, nonces and issued
                              capabilities live in sibling files (PATH.revocations.db, ...)
  --allow-ephemeral-receipts  keep receipts in memory only (lost on restart); local development only
${LISTENER_TIMEOUT_FLAGS_HELP}
${LISTENER_HOST_FLAGS_HELP}`

// The HTTP route flags of `gate sidecar` and `gate api protect` (the tool-call commands match tools,
// never paths).
export const HTTP_ROUTE_FLAGS_HELP = `  --deny-unmatched            a request whose path matches no operation of the OpenAPI document is
                              deny-by-default whatever its method: it needs a capability granting it,
                              as a mutating method does (default: the method rule, under which an
                              undocumented GET, HEAD or OPTIONS passes without one)`

export const HTTP_ROUTE_FLAG_OPTIONS = {
  'deny-unmatched': { type: 'boolean' },
} as const

export const SERVICE_POLICY_FLAGS_HELP = `  --case-sensitive-routes     compare path segments with their letter case (default: ignore it, as
                              Express and Koa route); a path that differs from a stricter route only
                              in case is still decided by that route
  --strict-nonces             deny-by-default requests first get a 428 with a single-use execution nonce
  --trusted-issuer KEY        also accept capability tokens signed by KEY (repeatable)
  --approval-ttl-secs N       how long a pending approval can be answered and used (default ${SERVICE_DEFAULTS.approvalTtlSeconds})
  --nonce-ttl-secs N          lifetime of an execution nonce (default ${SERVICE_DEFAULTS.nonceTtlSeconds})
  -h, --help                  show this help

${TRANSPARENCY_FLAGS_HELP}

${OBSERVABILITY_FLAGS_HELP}

${FLEET_FLAGS_HELP}`

export const SIDECAR_USAGE = `Usage: gate sidecar [--spec FILE] [--listen ADDR] (--receipt-store PATH | --allow-ephemeral-receipts) [options]

Evaluates GateHttpRequests from the SDK middleware, signs a receipt for every decision and stores it
durably before answering.

Options:
  --spec FILE                 OpenAPI 3.x document (JSON or YAML) giving the route policy; without it
                              safe methods pass and mutating methods need a capability
${SERVICE_STORE_FLAGS_HELP}
${HTTP_ROUTE_FLAGS_HELP}
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

export const SERVICE_FLAG_OPTIONS = {
  spec: { type: 'string' },
  listen: { type: 'string' },
  'receipt-store': { type: 'string' },
  'allow-ephemeral-receipts': { type: 'boolean' },
  'strict-nonces': { type: 'boolean' },
  'case-sensitive-routes': { type: 'boolean' },
  'trusted-issuer': { type: 'string', multiple: true },
  'approval-ttl-secs': { type: 'string' },
  'nonce-ttl-secs': { type: 'string' },
  ...TRANSPARENCY_FLAG_OPTIONS,
  ...OBSERVABILITY_FLAG_OPTIONS,
  ...LISTENER_TIMEOUT_FLAG_OPTIONS,
  ...LISTENER_HOST_FLAG_OPTIONS,
  ...FLEET_FLAG_OPTIONS,
  ...GLOBAL_FLAG_OPTIONS,
} as const

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('sidecar', SIDECAR_USAGE, async () => {
    const { values } = parseFlags(argv, { ...SERVICE_FLAG_OPTIONS, ...HTTP_ROUTE_FLAG_OPTIONS })
    if (values.help === true) {
      process.stdout.write(SIDECAR_USAGE + '\n')
      return 0
    }
    if (values['deny-unmatched'] === true && values.spec === undefined) {
      throw new UsageError('--deny-unmatched needs --spec FILE: without a document no path matches an operation')
    }
    const service = await startFromFlags(values, 'sidecar')
    await waitForShutdown({ logger: service.logger, inFlight: () => service.server.inFlight(), close: () => service.close() })
    return 0
  })
}

/** Shared by `gate sidecar` and `gate api protect`: flags → running service. */
export async function startFromFlags(
  values: Record<string, unknown>,
  name: string,
  extra: Partial<Parameters<typeof startService>[0]> & {
    policyLoader?: (options: RouteTableOptions) => ReturnType<typeof loadPolicyFile>
    /** Log to stderr instead of stdout (stdout carries a protocol). */
    logToStderr?: boolean
  } = {},
): Promise<RunningService & { logger: Logger; tracer: Tracer | undefined }> {
  const config = readServiceConfig(values)
  const { global, receiptStore, transparency, observability } = config
  // JSON lines escape every control character: no value can drive the terminal (docs/security.md)
  // `gate mcp serve` keeps stdout for MCP: its log goes to stderr
  const logger = extra.logger ?? createGateLogger(`gate ${name}`, observability.logLevel, extra.logToStderr === true ? pino.destination({ dest: 2, sync: true }) : undefined)
  const log = lineLogger(logger)
  const listen = parseServiceListenAddress(config.listen)
  const { policyLoader, ...serviceOptions } = extra
  const routeOptions: RouteTableOptions = { caseSensitive: config.caseSensitiveRoutes, denyUnmatched: config.denyUnmatched }
  const policy = await (policyLoader?.(routeOptions) ?? loadPolicyFile(config.spec, routeOptions))
  const authority = await loadAuthority(global.authoritySeedFile)
  if (authority.ephemeral) {
    // what to do, in words a first run can act on (issue 45)
    log(
      'warning: no --authority-seed-file, so this process signs with a key made at start: its receipts and tokens will not verify after a restart. ' +
        'To keep one key, create it once with `npx gate keygen .gate/authority.seed` and start with `--authority-seed-file .gate/authority.seed` ' +
        '(npm start: `npm start -- --authority-seed-file .gate/authority.seed`)',
    )
  }
  // before any store file is created: a start that cannot bind leaves nothing behind
  if (listen.kind === 'tcp') await checkCanListen(listen)
  // the control routes always need a token: given, or kept in a 0600 file (config/control-token.ts)
  const control = provideServiceControlToken({ ...global, receiptStore })
  // the fleet's token authenticates to trust-control: a token made up for this host would not
  if (config.fleet !== undefined && control.created) throw new UsageError('--control-url needs the fleet\'s control token (trust-control\'s service token): GATE_CONTROL_TOKEN, --control-token or --control-token-file')
  let stores = await openServiceStores({
    receiptStore,
    global,
    authority,
    log,
  })
  let fleet: FleetLink | undefined
  if (config.fleet !== undefined) {
    try {
      ;({ link: fleet, stores } = await startFleetLink({ settings: config.fleet, token: control.token, signer: authority.signer, label: `gate ${name} ${config.listen}`, receiptStore, stores, log }))
    } catch (err) {
      await stores.close()
      throw err
    }
  }
  // off unless OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set (docs/observability.md, "Traces")
  const tracing = await startTracing(`gate ${name}`, await packageVersion())
  const service = await startService({
    tracer: tracing?.tracer,
    listen: config.listen,
    timeouts: config.timeouts,
    allowedHosts: config.allowedHosts,
    policy,
    authority,
    stores,
    controlToken: control.token,
    trustedIssuers: config.trustedIssuers,
    strictNonces: config.strictNonces,
    approvalTtlSeconds: config.approvalTtlSeconds,
    nonceTtlSeconds: config.nonceTtlSeconds,
    transparency,
    log,
    logger,
    decisionLevel: observability.decisionLevel,
    metrics: observability.metrics ? createGateMetrics({ service: `gate ${name}`, version: await packageVersion() }) : undefined,
    metricsScrapeToken: observability.scrapeToken,
    fleet,
    ...serviceOptions,
  })
  const unmatched = routeOptions.denyUnmatched === true ? 'unmatched requests deny-by-default' : 'unmatched requests by the method rule'
  log(`policy: ${policy.source} (${policy.routeCount} routes, ${routeOptions.caseSensitive === true ? 'case-sensitive' : 'case-insensitive'} paths, HEAD decided as GET, ${unmatched}, policy_hash ${policy.policyHash})`)
  log(`receipts: ${stores.receiptBackend} (${stores.receiptLocation})`)
  log(`signer public key: ${authority.signer.publicKey}`)
  log(`transparency log: ${describeTransparency(transparency, stores.receiptBackend)}`)
  // where the token is, never the token itself
  log(
    control.file === undefined
      ? `control routes (/v1/*, /approvals*): bearer token from ${control.source}`
      : `control routes (/v1/*, /approvals*): bearer token in ${control.file}${control.created ? ' (created now, mode 0600)' : ''}`,
  )
  log(`metrics: ${observability.metrics ? `GET ${extra.fallback === undefined ? '/metrics and ' : ''}/gate/metrics (the control token${observability.scrapeToken === undefined ? '' : ' or GATE_METRICS_TOKEN'})` : 'off (--no-metrics)'}`)
  log(`listening on ${service.url}`)
  if (tracing === undefined) return { ...service, logger, tracer: undefined }
  // after the listening line: scripts take the first loopback URL in the output as the service's
  log(`traces: OTLP/HTTP to ${tracing.endpoint} as service.name "${tracing.serviceName}"`)
  // the spans of the last requests are exported before the process ends
  return { ...service, logger, tracer: tracing.tracer, close: graceMs => service.close(graceMs).finally(() => tracing.shutdown()) }
}

/** What the shutdown needs of a running service (`gate sidecar`, `gate api protect`, `gate trust serve`). */
export interface ShutdownTarget {
  logger: Logger
  inFlight(): number
  /** Drains in-flight requests, then flushes and closes the stores. */
  close(): Promise<void>
}

/** Resolves on SIGTERM/SIGINT after draining in-flight requests and flushing the stores. */
export function waitForShutdown(service: ShutdownTarget, stoppedMessage = 'receipts flushed, stopped'): Promise<void> {
  const { logger } = service
  return new Promise(resolve => {
    const stop = (signal: string) => {
      logger.info({ event: 'shutdown', signal }, `${signal} received, draining ${service.inFlight()} in-flight request(s)`)
      service.close().then(
        () => {
          logger.info({ event: 'stopped' }, stoppedMessage)
          resolve()
        },
        err => {
          logger.error({ event: 'shutdown_failed', ...errorFields(err) }, `shutdown failed: ${(err as Error).message}`)
          process.exitCode = 1
          resolve()
        },
      )
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
}

function describeTransparency(settings: TransparencySettings, backend: 'durable' | 'ephemeral'): string {
  if (!settings.enabled) return 'off (--no-transparency-log)'
  if (backend === 'ephemeral') return 'off (receipts are in memory)'
  const every = settings.everyReceipts > 0 ? `every ${settings.everyReceipts} receipts` : undefined
  const timer = settings.intervalMs > 0 ? `every ${settings.intervalMs / 1000} s when the log grew` : undefined
  return `checkpoints ${[every, timer, 'on request'].filter(Boolean).join(', ')}${settings.copyPath === undefined ? '' : `, copied to ${settings.copyPath}`}`
}
