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
import { migrate, type MigrationResult } from './pg-migrations.js'
import { PgReceiptLog } from './pg-receipt-log.js'
import { PgReceiptQuery } from './pg-receipt-query.js'
import { PgRevocationStore } from './pg-revocation-store.js'

/** Options of `openPgStores`. */
export interface PgStoresOptions extends PgDatabaseOptions {
  /** Public key of an authority seed (the signer's). Required. */
  derivePublicKey: (seed: Uint8Array) => string
  /** Largest receipt group-commit batch, default 512. */
  maxBatchSize?: number
  /** Called once per failed receipt commit. */
  onReceiptError?: (err: Error) => void
  /** Unix seconds, default the system clock. */
  now?: () => number
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
  const { derivePublicKey, maxBatchSize, onReceiptError, now: clock, ...database } = options
  const now = clock ?? (() => Math.floor(Date.now() / 1000))
  const db = new PgDatabase(database)
  // The heartbeat has a connection of its own: queued behind requests in the shared pool (captures
  // waiting on one row lock, say), it would miss the lease and the node would refuse writes for want
  // of quorum while the database is fine.
  const heartbeat = new PgDatabase({ ...database, poolSize: 1, applicationName: `${database.applicationName ?? PG_DATABASE_DEFAULTS.applicationName}-heartbeat` })
  try {
    const migrations = await migrate(db)
    const log = new PgReceiptLog(db, { maxBatchSize, onError: onReceiptError })
    const authority = new PgAuthorityStore(db, derivePublicKey, now)
    await authority.reload()
    return {
      backend: 'postgres',
      db,
      migrations,
      receipts: { isEphemeral: false, log, query: new PgReceiptQuery(db), listed: new PgListedReceiptStore(db) },
      revocations: new PgRevocationStore(db, now),
      budgets: new PgBudgetStore(db, now),
      capabilities: new PgCapabilityStore(db),
      approvals: new PgApprovalStore(db, now),
      authority,
      enrolledKeys: new PgEnrolledKeyStore(db, now),
      cluster: new PgClusterStore(heartbeat),
      async close() {
        await log.close().catch(() => undefined)
        await Promise.all([db.close(), heartbeat.close()])
      },
    }
  } catch (err) {
    await Promise.all([db.close(), heartbeat.close()])
    throw err
  }
}
