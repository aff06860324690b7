// Opens trust-control's stores on one PostgreSQL database: one pool, the schema brought up to date
// (migrations, under an advisory lock), then one object per store. An unreachable database fails here,
// at start, with a clear message (gate trust serve exits 1).
import { PgApprovalStore } from './pg-approval-store.js'
import { PgAuthorityStore } from './pg-authority-store.js'
import { PgBudgetStore } from './pg-budget-store.js'
import { PgCapabilityStore } from './pg-capability-store.js'
import { PgClusterStore } from './pg-cluster-store.js'
import { PG_DATABASE_DEFAULTS, PgDatabase, type PgDatabaseOptions } from './pg-database.js'
import { PgEnrolledKeyStore } from './pg-enrolled-key-store.js'
import { PgListedReceiptStore } from './pg-listed-receipt-store.js'
import { PgNotificationListener, REVOCATION_CHANNEL } from './pg-notifications.js'
import { migrate, type MigrationResult } from './pg-migrations.js'
import { PgReceiptLog } from './pg-receipt-log.js'
import { PgReceiptQuery } from './pg-receipt-query.js'
import { PgRevocationStore } from './pg-revocation-store.js'

/** Options of `openPgStores`. */
export interface PgStoresOptions extends PgDatabaseOptions {
  /** Connections of budget captures, a pool of their own; default half of `poolSize`, at least 2. */
  capturePoolSize?: number
  /** Public key of an authority seed (the signer's). Required. */
  derivePublicKey: (seed: Uint8Array) => string
  /** Largest receipt group-commit batch, default 512. */
  maxBatchSize?: number
  /** Receipt batches of at least this many new rows are COPYed (PgReceiptLogOptions.copyFromRows). */
  copyFromRows?: number
  /** Called once per failed receipt commit. */
  onReceiptError?: (err: Error) => void
  /** Unix seconds, default the system clock. */
  now?: () => number
  /** Operator-facing lines (a receipts partition that could not be created); default none. */
  log?: (line: string) => void
}

/** Trust-control's stores on PostgreSQL. */
export interface PgStores {
  readonly backend: 'postgres'
  db: PgDatabase
  /** What the migrations did at open. */
  migrations: MigrationResult
  receipts: { readonly isEphemeral: false; log: PgReceiptLog; query: PgReceiptQuery; listed: PgListedReceiptStore }
  revocations: PgRevocationStore
  budgets: PgBudgetStore
  capabilities: PgCapabilityStore
  approvals: PgApprovalStore
  authority: PgAuthorityStore
  enrolledKeys: PgEnrolledKeyStore
  cluster: PgClusterStore
  /** Flushes the receipt log, then closes the pool. */
  close(): Promise<void>
}

/** Connects, migrates and opens every store; closes the pool again when any step fails. */
export async function openPgStores(options: PgStoresOptions): Promise<PgStores> {
  const { derivePublicKey, maxBatchSize, copyFromRows, onReceiptError, now: clock, capturePoolSize, log: logLine, ...database } = options
  const now = clock ?? (() => Math.floor(Date.now() / 1000))
  const name = database.applicationName ?? PG_DATABASE_DEFAULTS.applicationName
  const db = new PgDatabase(database)
  // Pools of their own, so nothing waits behind what fills another: the heartbeat (queued behind
  // requests it would miss the lease, and the node would refuse writes while the database is fine), the
  // revocation feed (every connected sidecar reads it; it must answer while captures queue on a busy
  // counter) and budget captures (they wait on row locks, bounded by their deadline).
  const heartbeat = new PgDatabase({ ...database, poolSize: 1, applicationName: `${name}-heartbeat` })
  const feed = new PgDatabase({ ...database, poolSize: 2, applicationName: `${name}-feed` })
  const captures = new PgDatabase({ ...database, poolSize: capturePoolSize ?? Math.max(2, Math.floor((database.poolSize ?? PG_DATABASE_DEFAULTS.poolSize) / 2)), applicationName: `${name}-captures` })
  const pools = [db, heartbeat, feed, captures]
  // a connection of its own, outside the pools: held revocation-feed requests answer on another node's commit
  const listener = new PgNotificationListener({
    url: database.url,
    channel: REVOCATION_CHANNEL,
    applicationName: `${name}-listen`,
    connectTimeoutMs: database.connectTimeoutMs ?? PG_DATABASE_DEFAULTS.connectTimeoutMs,
  })
  try {
    const migrations = await migrate(db)
    await listener.start()
    // COPY stages a batch in a temporary table: a role without TEMPORARY on the database (PUBLIC has it
    // unless revoked) appends every batch through unnest instead of failing the large ones
    const temporary = await db.get<{ allowed: boolean }>("SELECT has_database_privilege(current_database(), 'TEMPORARY') AS allowed")
    const log = new PgReceiptLog(db, { maxBatchSize, copyFromRows: temporary?.allowed === true ? copyFromRows : Number.POSITIVE_INFINITY, onError: onReceiptError, log: logLine })
    const authority = new PgAuthorityStore(db, derivePublicKey, now)
    await authority.reload()
    return {
      backend: 'postgres',
      db,
      migrations,
      receipts: { isEphemeral: false, log, query: new PgReceiptQuery(db), listed: new PgListedReceiptStore(db) },
      revocations: new PgRevocationStore(db, now, feed, listener),
      budgets: new PgBudgetStore(db, now, captures),
      capabilities: new PgCapabilityStore(db),
      approvals: new PgApprovalStore(db, now),
      authority,
      enrolledKeys: new PgEnrolledKeyStore(db, now),
      cluster: new PgClusterStore(heartbeat),
      async close() {
        await log.close().catch(() => undefined)
        await listener.close()
        await Promise.all(pools.map(pool => pool.close()))
      },
    }
  } catch (err) {
    await listener.close()
    await Promise.all(pools.map(pool => pool.close()))
    throw err
  }
}
