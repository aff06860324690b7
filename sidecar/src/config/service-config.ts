// The one configuration of `gate sidecar` and `gate api protect`: read from their flags once, with
// every default applied here (STYLE, Options). The service, the kernel and the stores take these
// values as they are and never default them again.
import { ConfigError, DURABLE_RECEIPTS_MESSAGE, UsageError } from '../errors.js'
import { isInMemoryPath } from '../stores/store-paths.js'
import { readGlobalFlags, type GlobalFlags } from './global-flags.js'
import { DEFAULT_LISTEN, parseServiceListenAddress } from './listen-address.js'
import { readListenerTimeouts, type ListenerTimeouts } from './listener-timeouts.js'
import { readAllowedHosts } from './listener-hosts.js'
import { readTransparencyFlags, type TransparencySettings } from './transparency-flags.js'
import { readObservabilityFlags, type ObservabilitySettings } from './observability-flags.js'
import { readFleetFlags, type FleetSettings } from './fleet-flags.js'
import { readPublicKeyFlags } from './public-key-flag.js'

/** Defaults of the service flags (the listener's and the transparency log's have their own tables). */
export const SERVICE_DEFAULTS = Object.freeze({
  listen: DEFAULT_LISTEN,
  /** --approval-ttl-secs: how long a pending approval can be answered and used. */
  approvalTtlSeconds: 3600,
  /** --nonce-ttl-secs: lifetime of an execution nonce. */
  nonceTtlSeconds: 60,
})

/** The resolved flags of a service command. */
export interface ServiceConfig {
  global: GlobalFlags
  /** --spec; undefined: the method rule for every path (or, in api protect, discovery). */
  spec: string | undefined
  /** --receipt-store, else --receipt-db; undefined: receipts in memory (--allow-ephemeral-receipts). */
  receiptStore: string | undefined
  /** --listen, default SERVICE_DEFAULTS.listen. */
  listen: string
  timeouts: ListenerTimeouts
  /** --allowed-host: Host names Gate's routes answer besides the loopback ones (listener-hosts.ts). */
  allowedHosts: readonly string[]
  transparency: TransparencySettings
  /** --no-metrics, --log-level, --decision-log-level, GATE_METRICS_TOKEN (observability-flags.ts). */
  observability: ObservabilitySettings
  /** --case-sensitive-routes. */
  caseSensitiveRoutes: boolean
  /** --deny-unmatched (gate sidecar and gate api protect): requests matching no operation are deny-by-default. */
  denyUnmatched: boolean
  /** --trusted-issuer, repeatable. */
  trustedIssuers: readonly string[]
  /** --strict-nonces. */
  strictNonces: boolean
  /** --approval-ttl-secs, default SERVICE_DEFAULTS.approvalTtlSeconds. */
  approvalTtlSeconds: number
  /** --control-url and its flags (fleet-flags.ts); undefined: a standalone service. */
  fleet: FleetSettings | undefined
  /** --nonce-ttl-secs, default SERVICE_DEFAULTS.nonceTtlSeconds. */
  nonceTtlSeconds: number
}

/** The receipt store path from --receipt-store or --receipt-db; undefined when none or in-memory. */
export function resolveReceiptStore(receiptStore: string | undefined, receiptDb: string | undefined): string | undefined {
  const path = receiptStore ?? receiptDb
  return path === undefined || isInMemoryPath(path) ? undefined : path
}

/** Reads the service flags; refuses a start without durable receipts unless told otherwise (spec 01). */
export function readServiceConfig(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const global = readGlobalFlags(values, env)
  const timeouts = readListenerTimeouts(values)
  // the durable-receipts gate, before anything is loaded or opened
  const receiptStore = resolveReceiptStore(values['receipt-store'] as string | undefined, global.receiptDb)
  if (receiptStore === undefined && values['allow-ephemeral-receipts'] !== true) throw new ConfigError(DURABLE_RECEIPTS_MESSAGE)
  const listen = (values.listen as string | undefined) ?? SERVICE_DEFAULTS.listen
  parseServiceListenAddress(listen) // checked here, so flag errors keep their order
  return {
    global,
    spec: values.spec as string | undefined,
    receiptStore,
    listen,
    timeouts,
    allowedHosts: readAllowedHosts(values['allowed-host']),
    transparency: readTransparencyFlags(values),
    observability: readObservabilityFlags(values, env),
    caseSensitiveRoutes: values['case-sensitive-routes'] === true,
    denyUnmatched: values['deny-unmatched'] === true,
    trustedIssuers: readPublicKeyFlags('--trusted-issuer', values['trusted-issuer'] as string[] | undefined),
    strictNonces: values['strict-nonces'] === true,
    fleet: readFleetFlags(values, global),
    approvalTtlSeconds: positiveInt(values['approval-ttl-secs'], '--approval-ttl-secs', SERVICE_DEFAULTS.approvalTtlSeconds),
    nonceTtlSeconds: positiveInt(values['nonce-ttl-secs'], '--nonce-ttl-secs', SERVICE_DEFAULTS.nonceTtlSeconds),
  }
}

function positiveInt(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer, got "${String(value)}"`)
  return n
}
