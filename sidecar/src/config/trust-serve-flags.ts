// `gate trust serve`'s flags, read into @gate/trust's TrustOptions and the settings of the host that
// runs it (app/trust-host.ts). Everything checkable without a store or the network is checked here
// (usage errors, exit 2); the secret files are read here too, so a token or seed that cannot be read
// stops the start before anything is opened (exit 1).
import { readFile, stat } from 'node:fs/promises'
import { signingKeyBytes } from '@gate/sdk'
import { checkDatabaseUrl } from '@gate/trust/postgres'
import { CLUSTER_SYNC_INTERVAL_MS, type TrustOptions } from '@gate/trust/server'
import { ConfigError, UsageError } from '../errors.js'
import { isInMemoryPath } from '../stores/index.js'
import type { TrustHostSettings } from '../app/trust-host.js'
import { readKeyFile } from './authority-seed.js'
import { parseListenAddress } from './listen-address.js'
import { LISTENER_TIMEOUT_FLAG_OPTIONS, readListenerTimeouts } from './listener-timeouts.js'
import { OBSERVABILITY_FLAG_OPTIONS, readObservabilityFlags } from './observability-flags.js'
import { loadTls, readTlsFlags, TLS_FLAG_OPTIONS } from './tls-flags.js'
import { readTransparencyFlags, TRANSPARENCY_FLAG_OPTIONS } from './transparency-flags.js'

/** Trust-control's default listen address: the sidecar's port + 1, loopback. */
export const TRUST_DEFAULT_LISTEN = '127.0.0.1:9091'

export const TRUST_SERVE_FLAG_OPTIONS = {
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
  'cluster-discover-peers': { type: 'boolean' },
  'cluster-sync-interval-ms': { type: 'string' },
  ...TLS_FLAG_OPTIONS,
  ...TRANSPARENCY_FLAG_OPTIONS,
  ...LISTENER_TIMEOUT_FLAG_OPTIONS,
  ...OBSERVABILITY_FLAG_OPTIONS,
} as const

const TENANT_TOKEN_FLAG = /^([^=]+)=(.+)$/
const POSITIVE_INT = /^[1-9][0-9]{0,6}$/

/** What the flags give: the server's options (less its host) and the host's settings. */
export interface TrustServeSettings {
  options: Omit<TrustOptions, 'host'>
  host: Omit<TrustHostSettings, 'logger'>
}

export async function readTrustServeFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<TrustServeSettings> {
  const observability = readObservabilityFlags(values)
  const receiptDb = values['receipt-db'] as string | undefined
  const envUrl = env.GATE_DATABASE_URL
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
    for (const flag of ['advertise-url', 'cluster-peer', 'cluster-discover-peers', 'cluster-sync-interval-ms', 'database-pool-size']) {
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
  const transparency = readTransparencyFlags(values)
  const tokenFile = values['service-token-file'] as string | undefined
  const envToken = env.GATE_CONTROL_TOKEN
  if (tokenFile === undefined && (envToken === undefined || envToken === '')) {
    throw new UsageError('an admin service token is required: --service-token-file PATH or the GATE_CONTROL_TOKEN environment variable')
  }
  // the secrets and TLS files, read once the flags are known to be usable
  const serviceToken = tokenFile === undefined ? envToken! : await readSecretFile(tokenFile, '--service-token-file')
  const tenantTokens = new Map<string, string>()
  for (const { tenant, file } of tenantFlags) {
    if (tenantTokens.has(tenant)) throw new UsageError(`--tenant-token names tenant "${tenant}" twice`)
    tenantTokens.set(tenant, await readSecretFile(file, `--tenant-token ${tenant}`))
  }
  const tls = await loadTls(tlsSettings)
  const authoritySeed = seedFile === undefined ? undefined : signingKeyBytes(await readKeyFile(seedFile))
  return {
    options: {
      store:
        databaseUrl === undefined
          ? { kind: 'sqlite', receiptDb: receiptDb!, revocationDb: values['revocation-db'] as string | undefined, budgetDb: values['budget-db'] as string | undefined, authorityDb }
          : { kind: 'postgres', url: databaseUrl, poolSize: cluster.poolSize },
      serviceToken,
      tenantTokens,
      authoritySeed,
      authoritySeedSource: `--authority-seed-file ${seedFile ?? ''}`.trim(),
      tokenSource: tokenFile === undefined ? 'from GATE_CONTROL_TOKEN' : 'from --service-token-file',
      cluster:
        databaseUrl === undefined
          ? undefined
          : { advertiseUrl: cluster.advertiseUrl, peers: cluster.peers, discoverPeers: cluster.discoverPeers || undefined, syncIntervalMs: cluster.syncIntervalMs },
    },
    host: { listen, tls, allowPlaintextRemote: tlsSettings.allowPlaintextRemote, timeouts, transparency, observability },
  }
}

interface ClusterFlags {
  advertiseUrl: string | undefined
  peers: string[] | undefined
  discoverPeers: boolean
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
  if (peers !== undefined && advertiseUrl !== undefined && peers.includes(advertiseUrl)) throw new UsageError("--cluster-peer lists this node's own --advertise-url")
  const discoverPeers = values['cluster-discover-peers'] === true
  if (discoverPeers && peers !== undefined) throw new UsageError('--cluster-discover-peers and --cluster-peer are mutually exclusive: the membership is either fixed or discovered')
  return { advertiseUrl, peers, discoverPeers, syncIntervalMs: int('cluster-sync-interval-ms') ?? CLUSTER_SYNC_INTERVAL_MS, poolSize: int('database-pool-size') }
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
