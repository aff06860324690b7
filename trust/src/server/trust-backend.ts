// Where `gate trust serve` keeps its state, chosen once at start: the SQLite files of one host (the
// default, beside a sidecar's receipt store, opened by the host) or one PostgreSQL database shared by any
// number of nodes. Both hand the same store interfaces (store-ports.ts) to the same wiring; what differs
// is here: how they open, how the authority key is locked across nodes, where the transparency log
// lives, and what a node reports about its fleet.
import { publicKeyOfKeyBytes } from '@gate/sdk'
import type { RotatingAuthorityOptions } from '../authority.js'
import { openPgStores, PgTransparencyLogStore, type PgStores } from '../postgres/index.js'
import type { EnrolledKeyStore, TransparencyLogBackend, TrustStores } from '../store-ports.js'
import type { SqliteStoresRequest, TrustServerHost } from './host-ports.js'

/** The opened backend. */
export interface TrustBackend {
  kind: 'sqlite' | 'postgres'
  stores: TrustStores
  enrolledKeys: EnrolledKeyStore
  /** ReceiptListResponse.backend. */
  listedBackend: string
  /** The receipt log refuses ids it already holds (ingest needs no check of its own). */
  appendSkipsDuplicates: boolean
  /** Cross-node authority locking and refresh (PostgreSQL); none for SQLite. */
  authorityHooks: Pick<RotatingAuthorityOptions, 'lock' | 'refresh'>
  /** Startup log lines saying where things are. */
  describe(): string[]
  openTransparencyBackend(): Promise<TransparencyLogBackend>
  /** The PostgreSQL stores (the cluster's heartbeat table among them). */
  postgres?: PgStores
  close(): Promise<void>
}

/** SQLite: the files of one host, opened by the host process. */
export async function openSqliteBackend(host: Pick<TrustServerHost, 'openSqliteStores'>, request: SqliteStoresRequest): Promise<TrustBackend> {
  const stores = await host.openSqliteStores(request)
  return {
    kind: 'sqlite',
    stores,
    enrolledKeys: stores.enrolledKeys,
    listedBackend: stores.receipts.isEphemeral ? 'memory' : 'sqlite',
    appendSkipsDuplicates: false,
    authorityHooks: {},
    describe: () => stores.describe(),
    openTransparencyBackend: () => stores.openTransparencyBackend(),
    close: () => stores.close(),
  }
}

/** PostgreSQL: one database for every node. */
export interface PostgresBackendOptions {
  url: string
  poolSize?: number
  /** Operator-facing lines of the stores (a receipts partition that could not be created). */
  log?: (line: string) => void
}

export async function openPostgresBackend(options: PostgresBackendOptions): Promise<TrustBackend> {
  const pg = await openPgStores({ url: options.url, poolSize: options.poolSize, derivePublicKey: publicKeyOfKeyBytes, applicationName: 'gate trust serve', log: options.log })
  const { migrations } = pg
  return {
    kind: 'postgres',
    stores: pg,
    postgres: pg,
    enrolledKeys: pg.enrolledKeys,
    listedBackend: 'postgres',
    appendSkipsDuplicates: true,
    authorityHooks: {
      lock: (mode, fn) => pg.authority.withAuthorityLock(mode, fn),
      refresh: () => pg.authority.refresh(),
    },
    describe: () => [
      `receipts: postgres ${pg.db.location} (schema version ${migrations.version}${migrations.applied.length === 0 ? '' : `, applied ${migrations.applied.join(', ')} now`})`,
    ],
    openTransparencyBackend: async () => new PgTransparencyLogStore(pg.db),
    close: () => pg.close(),
  }
}
