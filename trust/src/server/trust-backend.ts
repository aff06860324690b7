// Where `gate trust serve` keeps its state, chosen once at start: the SQLite files of one host (the
// default, beside a sidecar's receipt store) or one PostgreSQL database shared by any number of nodes
// (--database-url). Both hand the same store interfaces (stores/trust-stores.ts) to the same wiring; what
// differs is here: how they open, how the authority key is locked across nodes, where the transparency
// log lives, and what a node reports about its fleet.
import { publicKeyFor, type Signer } from '@gate/sdk'
import type { TransparencySettings } from '../config/transparency-flags.js'
import {
  closeStores,
  openEnrolledKeyStore,
  openStores,
  type EnrolledKeyStore,
  type ReceiptWriter,
  type Stores,
  type TrustStores,
} from '../stores/index.js'
import { openPgStores, PgTransparencyLogStore, type PgStores } from '../stores/postgres/index.js'
import type { TransparencyLog } from '../transparency/transparency-log.js'
import { sqliteTransparencyBackend, startTransparencyLog, type StartTransparencyLogOptions } from './transparency-wiring.js'
import type { RotatingAuthorityOptions } from './trust-wiring.js'

/** What `startTransparency` needs beside the backend (see StartTransparencyLogOptions). */
export type TrustTransparencyOptions = Pick<StartTransparencyLogOptions, 'writer' | 'settings' | 'signer' | 'acceptedSigners' | 'onUnverified' | 'log'>

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
  startTransparency(options: TrustTransparencyOptions): Promise<TransparencyLog | undefined>
  /** The SQLite stores, or the PostgreSQL ones. */
  sqlite?: Stores
  postgres?: PgStores
  close(): Promise<void>
}

/** SQLite: the files of one host. */
export interface SqliteBackendOptions {
  receiptDb: string
  revocationDb?: string
  budgetDb?: string
  authorityDb?: string
  log: (line: string) => void
}

export async function openSqliteBackend(options: SqliteBackendOptions): Promise<TrustBackend> {
  const stores = await openStores({
    receiptDb: options.receiptDb,
    revocationDb: options.revocationDb,
    budgetDb: options.budgetDb,
    authorityDb: options.authorityDb,
    derivePublicKey: s => publicKeyFor(s),
  })
  let enrolledKeys: EnrolledKeyStore
  try {
    enrolledKeys = await openEnrolledKeyStore(stores.paths.capabilities, { now: () => Math.floor(Date.now() / 1000) })
    const started = Date.now()
    await stores.receipts.createTrustIndexes()
    options.log(`receipt indexes ready (${Date.now() - started} ms)`)
  } catch (err) {
    await closeStores(stores).catch(() => undefined)
    throw err
  }
  return {
    kind: 'sqlite',
    stores,
    sqlite: stores,
    enrolledKeys,
    listedBackend: stores.isEphemeral ? 'memory' : 'sqlite',
    appendSkipsDuplicates: false,
    authorityHooks: {},
    describe: () => [`receipts: sqlite ${stores.paths.receipts} (${stores.receipts.log.driver})`],
    // a sidecar appending to the same file does not notify this process: look every 2 s as well
    startTransparency: options => startTransparencyLog({ ...options, receipts: stores.receipts, openBackend: sqliteTransparencyBackend(stores), pollIntervalMs: 2000 }),
    async close() {
      await enrolledKeys.close().catch(() => undefined)
      await closeStores(stores)
    },
  }
}

/** PostgreSQL: one database for every node. */
export interface PostgresBackendOptions {
  url: string
  poolSize?: number
  log: (line: string) => void
}

export async function openPostgresBackend(options: PostgresBackendOptions): Promise<TrustBackend> {
  const pg = await openPgStores({ url: options.url, poolSize: options.poolSize, derivePublicKey: s => publicKeyFor(s), applicationName: 'gate trust serve' })
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
    // other nodes append to the same table without telling this one: look every 2 s as well
    startTransparency: options => startTransparencyLog({ ...options, receipts: pg.receipts, openBackend: async () => new PgTransparencyLogStore(pg.db), pollIntervalMs: 2000 }),
    close: () => pg.close(),
  }
}
