// `gate sidecar`: the long-running localhost evaluator (spec 02). Refuses to start without durable
// receipts unless told otherwise (spec 01), logs what it serves, and on SIGTERM drains in-flight
// requests and flushes the receipt writer before exiting.
import { checkControlToken } from '@gate/sdk/server'
import { ConfigError, DURABLE_RECEIPTS_MESSAGE, UsageError } from '../errors.js'
import { GLOBAL_FLAG_OPTIONS, GLOBAL_FLAGS_HELP, readGlobalFlags } from '../config/global-flags.js'
import { DEFAULT_LISTEN, parseServiceListenAddress } from '../config/listen-address.js'
import { checkCanListen } from '../config/listen-check.js'
import { loadAuthority } from '../config/authority-seed.js'
import { loadPolicyFile } from '../app/load-policy.js'
import { openServiceStores, resolveReceiptStore } from '../app/open-stores.js'
import { startService, type RunningService } from '../app/create-service.js'
import { parseFlags, runWithExitCodes } from './parse-flags.js'
import { readTransparencyFlags, TRANSPARENCY_FLAG_OPTIONS, TRANSPARENCY_FLAGS_HELP } from '../config/transparency-flags.js'
import { OBSERVABILITY_FLAG_OPTIONS, OBSERVABILITY_FLAGS_HELP, readObservabilityFlags } from '../config/observability-flags.js'
import { createGateLogger, errorFields, lineLogger, type Logger } from '../observability/logger.js'
import { createGateMetrics } from '../observability/metrics.js'
import { packageVersion } from '../app/create-service.js'

// Flags `gate sidecar` and `gate api protect` share, in two groups (api protect puts its upstream
// timeout between them).
export const SERVICE_STORE_FLAGS_HELP = `  --listen ADDR               listen address (default ${DEFAULT_LISTEN}), or unix:PATH for a Unix
                              socket (created 0600; SDKs then use sidecarUrl 'unix:PATH'); a port in
                              use stops the start before any store file is created
  --receipt-store PATH        SQLite receipt store; revocations, approvals, budgets, nonces and issued
                              capabilities live in sibling files (PATH.revocations.db, ...)
  --allow-ephemeral-receipts  keep receipts in memory only (lost on restart); local development only`

export const SERVICE_POLICY_FLAGS_HELP = `  --strict-nonces             deny-by-default requests first get a 428 with a single-use execution nonce
  --trusted-issuer KEY        also accept capability tokens signed by KEY (repeatable)
  --approval-ttl-secs N       how long a pending approval can be answered and used (default 3600)
  --nonce-ttl-secs N          lifetime of an execution nonce (default 60)
  -h, --help                  show this help

${TRANSPARENCY_FLAGS_HELP}

${OBSERVABILITY_FLAGS_HELP}`

export const SIDECAR_USAGE = `Usage: gate sidecar [--spec FILE] [--listen ADDR] (--receipt-store PATH | --allow-ephemeral-receipts) [options]

Evaluates GateHttpRequests from the SDK middleware, signs a receipt for every decision and stores it
durably before answering.

Options:
  --spec FILE                 OpenAPI 3.x document (JSON or YAML) giving the route policy; without it
                              safe methods pass and mutating methods need a capability
${SERVICE_STORE_FLAGS_HELP}
${SERVICE_POLICY_FLAGS_HELP}

${GLOBAL_FLAGS_HELP}`

export const SERVICE_FLAG_OPTIONS = {
  spec: { type: 'string' },
  listen: { type: 'string' },
  'receipt-store': { type: 'string' },
  'allow-ephemeral-receipts': { type: 'boolean' },
  'strict-nonces': { type: 'boolean' },
  'trusted-issuer': { type: 'string', multiple: true },
  'approval-ttl-secs': { type: 'string' },
  'nonce-ttl-secs': { type: 'string' },
  ...TRANSPARENCY_FLAG_OPTIONS,
  ...OBSERVABILITY_FLAG_OPTIONS,
  ...GLOBAL_FLAG_OPTIONS,
} as const

export async function run(argv: string[]): Promise<number> {
  return runWithExitCodes('sidecar', SIDECAR_USAGE, async () => {
    const { values } = parseFlags(argv, SERVICE_FLAG_OPTIONS)
    if (values.help === true) {
      process.stdout.write(SIDECAR_USAGE + '\n')
      return 0
    }
    const service = await startFromFlags(values, 'sidecar')
    await waitForShutdown(service)
    return 0
  })
}

/** Shared by `gate sidecar` and `gate api protect`: flags → running service. */
export async function startFromFlags(
  values: Record<string, unknown>,
  name: string,
  extra: Partial<Parameters<typeof startService>[0]> & {
    policyLoader?: () => ReturnType<typeof loadPolicyFile>
  } = {},
): Promise<RunningService & { logger: Logger }> {
  const global = readGlobalFlags(values)
  const observability = readObservabilityFlags(values)
  const logger = extra.logger ?? createGateLogger(`gate ${name}`, observability.logLevel)
  const log = lineLogger(logger)
  // (1) durable-receipts gate, before anything is loaded or opened
  const receiptStore = resolveReceiptStore(values['receipt-store'] as string | undefined, global.receiptDb)
  if (receiptStore === undefined && values['allow-ephemeral-receipts'] !== true) throw new ConfigError(DURABLE_RECEIPTS_MESSAGE)
  // the one token rule of every Gate service (@gate/sdk/server control-token-rule.ts)
  if (global.controlToken !== undefined) checkControlToken(global.controlToken, 'the control token (GATE_CONTROL_TOKEN or --control-token)')
  const listenText = (values.listen as string | undefined) ?? DEFAULT_LISTEN
  const listen = parseServiceListenAddress(listenText)
  const { policyLoader, ...serviceOptions } = extra
  const transparency = readTransparencyFlags(values)
  const policy = await (policyLoader?.() ?? loadPolicyFile(values.spec as string | undefined))
  const authority = await loadAuthority(global.authoritySeedFile)
  if (authority.ephemeral) {
    log('warning: no --authority-seed-file; generated a fresh signing key for this process only (receipts signed now will not verify against the key of the next boot)')
  }
  // before any store file is created: a start that cannot bind leaves nothing behind
  if (listen.kind === 'tcp') await checkCanListen(listen)
  const stores = await openServiceStores({
    receiptStore,
    global,
    authority,
    log,
  })
  const service = await startService({
    listen: listenText,
    policy,
    authority,
    stores,
    controlToken: global.controlToken,
    trustedIssuers: (values['trusted-issuer'] as string[] | undefined) ?? [],
    strictNonces: values['strict-nonces'] === true,
    approvalTtlSeconds: positiveInt(values['approval-ttl-secs'], '--approval-ttl-secs', 3600),
    nonceTtlSeconds: positiveInt(values['nonce-ttl-secs'], '--nonce-ttl-secs', 60),
    transparency,
    log,
    logger,
    decisionLevel: observability.decisionLevel,
    metrics: observability.metrics ? createGateMetrics({ service: `gate ${name}`, version: await packageVersion() }) : undefined,
    metricsScrapeToken: observability.scrapeToken,
    ...serviceOptions,
  })
  log(`policy: ${policy.source} (${policy.routeCount} routes, policy_hash ${policy.policyHash})`)
  log(`receipts: ${stores.receiptBackend} (${stores.receiptLocation})`)
  log(`signer public key: ${authority.signer.publicKey}`)
  log(`transparency log: ${describeTransparency(transparency, stores.receiptBackend)}`)
  if (global.controlToken === undefined) {
    log(`control routes (/approvals, /v1): ${service.socketPath === null ? 'loopback callers' : 'callers on the 0600 Unix socket'} only (no control token configured)`)
  }
  log(`metrics: ${observability.metrics ? `GET ${extra.fallback === undefined ? '/metrics and ' : ''}/gate/metrics (same access as the control routes${observability.scrapeToken === undefined ? '' : ', or GATE_METRICS_TOKEN'})` : 'off (--no-metrics)'}`)
  log(`listening on ${service.url}`)
  return { ...service, logger }
}

/** Resolves on SIGTERM/SIGINT after draining in-flight requests and flushing the stores. */
export function waitForShutdown(service: RunningService & { logger: Logger }): Promise<void> {
  const { logger } = service
  return new Promise(resolve => {
    const stop = (signal: string) => {
      logger.info({ event: 'shutdown', signal }, `${signal} received, draining ${service.server.inFlight()} in-flight request(s)`)
      service.close().then(
        () => {
          logger.info({ event: 'stopped' }, 'receipts flushed, stopped')
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

function describeTransparency(settings: ReturnType<typeof readTransparencyFlags>, backend: 'durable' | 'ephemeral'): string {
  if (!settings.enabled) return 'off (--no-transparency-log)'
  if (backend === 'ephemeral') return 'off (receipts are in memory)'
  const every = settings.everyReceipts > 0 ? `every ${settings.everyReceipts} receipts` : undefined
  const timer = settings.intervalMs > 0 ? `every ${settings.intervalMs / 1000} s when the log grew` : undefined
  return `checkpoints ${[every, timer, 'on request'].filter(Boolean).join(', ')}${settings.copyPath === undefined ? '' : `, copied to ${settings.copyPath}`}`
}

function positiveInt(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer, got "${String(value)}"`)
  return n
}
