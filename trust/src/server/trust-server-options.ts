// The options of `createTrustServer` (`gate trust serve` reads its flags into them), checked once, at
// construction, and frozen with their defaults applied; nothing inside defaults them again.
import { InvalidConfigError, UnknownOptionError } from '@gate/sdk'
import type { TrustServerHost } from './host-ports.js'
import { isAuthorityKey } from '../stores/store-input.js'

/** Default heartbeat interval of a clustered node (spec 03). */
export const CLUSTER_SYNC_INTERVAL_MS = 500

/** Where trust-control keeps its state. */
export type TrustStoreOptions =
  | {
      kind: 'sqlite'
      /** The durable SQLite receipt store of one host (a sidecar's --receipt-store). */
      receiptDb: string
      /** Default: beside the receipt store. */
      revocationDb?: string
      budgetDb?: string
      authorityDb?: string
    }
  | {
      kind: 'postgres'
      /** `postgres://user:password@host:port/database?sslmode=...`, shared by every node. */
      url: string
      /** Most connections of this node's requests, default 10 (the heartbeat has one more). */
      poolSize?: number
    }

/** A clustered node (PostgreSQL only). */
export interface TrustClusterOptions {
  /** This node's URL as peers and the load balancer reach it; default the URL it listens on. */
  advertiseUrl?: string
  /**
   * The fixed membership: the other nodes' advertise URLs, also the peer-auth allowlist (spec 03). Default
   * none: a cluster of one.
   */
  peers?: readonly string[]
  /**
   * Take the membership from the heartbeat table instead (the nodes seen lately), default false. It gives
   * up what a fixed membership guarantees: a dead node is dropped after max(30 s, 20 leases), so a lone
   * survivor leads with a quorum of one, and any writer of the table joins the allowlist (docs/postgres.md).
   */
  discoverPeers?: boolean
  /** Heartbeat interval, default CLUSTER_SYNC_INTERVAL_MS. */
  syncIntervalMs?: number
}

/** Options of `createTrustServer`. */
export interface TrustOptions {
  store: TrustStoreOptions
  /** The admin service token (at least 16 characters): reads and writes everything; keys peer digests. */
  serviceToken: string
  /** Read tokens by tenant. Default none. */
  tenantTokens?: ReadonlyMap<string, string>
  /**
   * Sign with this key, as stores keep one (@gate/sdk signingKeyBytes of a key file: an Ed25519 seed's 32
   * bytes, or another algorithm's key file line); it is recorded in the authority store and pins the key.
   * Default: the store's key.
   */
  authoritySeed?: Uint8Array
  /** Names where the seed came from in messages (`--authority-seed-file PATH`). */
  authoritySeedSource?: string
  /** Names where the tokens came from in the startup log (never the tokens). */
  tokenSource?: string
  cluster?: TrustClusterOptions
  host: TrustServerHost
}

/** Resolved options: every default applied. */
export interface ResolvedTrustOptions {
  store: TrustStoreOptions
  serviceToken: string
  tenantTokens: ReadonlyMap<string, string>
  authoritySeed: Uint8Array | undefined
  authoritySeedSource: string
  tokenSource: string
  cluster: { advertiseUrl: string | undefined; peers: readonly string[]; discoverPeers: boolean; syncIntervalMs: number }
  host: TrustServerHost
}

const KEYS = new Set(['store', 'serviceToken', 'tenantTokens', 'authoritySeed', 'authoritySeedSource', 'tokenSource', 'cluster', 'host'])
const HOST_MEMBERS = ['checkListen', 'serve', 'openSqliteStores', 'startReceipts', 'log'] as const

/** Checks `options` and applies the defaults; throws gate_invalid_config naming the option. */
export function resolveTrustOptions(options: TrustOptions): ResolvedTrustOptions {
  for (const key of Object.keys(options)) if (!KEYS.has(key)) throw new UnknownOptionError(`trust options.${key}`, [...KEYS])
  const { store, serviceToken, host } = options
  if (store?.kind === 'sqlite') {
    if (typeof store.receiptDb !== 'string' || store.receiptDb === '') throw new InvalidConfigError('trust options.store.receiptDb', 'a path', store.receiptDb)
  } else if (store?.kind === 'postgres') {
    if (typeof store.url !== 'string' || store.url === '') throw new InvalidConfigError('trust options.store.url', 'a postgres:// URL', store.url)
    if (store.poolSize !== undefined && (!Number.isSafeInteger(store.poolSize) || store.poolSize < 1)) throw new InvalidConfigError('trust options.store.poolSize', 'a positive integer', store.poolSize)
  } else {
    throw new InvalidConfigError('trust options.store', '{ kind: "sqlite", receiptDb } or { kind: "postgres", url }', store)
  }
  // its strength is checked by the authenticator, with every tenant token (auth.ts)
  if (typeof serviceToken !== 'string') throw new InvalidConfigError('trust options.serviceToken', 'a string', serviceToken === undefined ? undefined : '(hidden)')
  if (options.authoritySeed !== undefined && !isAuthorityKey(options.authoritySeed)) {
    throw new InvalidConfigError('trust options.authoritySeed', 'a signing key (signingKeyBytes: 32 bytes of an Ed25519 seed, or a key file line)', '(hidden)')
  }
  if (typeof host !== 'object' || host === null) throw new InvalidConfigError('trust options.host', 'the process host (TrustServerHost)', host)
  for (const member of HOST_MEMBERS) if (typeof host[member] !== 'function') throw new InvalidConfigError(`trust options.host.${member}`, 'a function', host[member])
  const cluster = options.cluster ?? {}
  const syncIntervalMs = cluster.syncIntervalMs ?? CLUSTER_SYNC_INTERVAL_MS
  if (!Number.isSafeInteger(syncIntervalMs) || syncIntervalMs < 1) throw new InvalidConfigError('trust options.cluster.syncIntervalMs', 'a positive integer', syncIntervalMs)
  if (store.kind === 'sqlite' && (cluster.advertiseUrl !== undefined || cluster.peers !== undefined || cluster.discoverPeers !== undefined)) {
    throw new InvalidConfigError('trust options.cluster', 'absent with a SQLite store (one node)', cluster)
  }
  if (cluster.discoverPeers !== undefined && typeof cluster.discoverPeers !== 'boolean') throw new InvalidConfigError('trust options.cluster.discoverPeers', 'a boolean', cluster.discoverPeers)
  if (cluster.discoverPeers === true && cluster.peers !== undefined) {
    throw new InvalidConfigError('trust options.cluster', 'either peers (a fixed membership) or discoverPeers, not both', { peers: cluster.peers, discoverPeers: true })
  }
  return Object.freeze({
    store: Object.freeze({ ...store }),
    serviceToken,
    tenantTokens: options.tenantTokens ?? new Map(),
    authoritySeed: options.authoritySeed,
    authoritySeedSource: options.authoritySeedSource ?? 'the authority seed',
    tokenSource: options.tokenSource ?? 'the options',
    cluster: Object.freeze({ advertiseUrl: cluster.advertiseUrl, peers: Object.freeze([...(cluster.peers ?? [])]), discoverPeers: cluster.discoverPeers ?? false, syncIntervalMs }),
    host,
  })
}
