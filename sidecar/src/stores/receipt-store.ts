// The receipt store: one SQLite file holding the receipt log (receipt-log.ts: the table and its appends,
// on the write connection), read through receipt-query.ts (a connection of its own), and the tool and
// child receipts of trust-control (listed-receipt-store.ts). Opening stamps or checks the file's
// revision (revision-stamp.ts); closing flushes the log before anything closes.
import { InvalidConfigError } from '@gate/sdk'
import { GROUP_COMMIT_DEFAULTS } from '@gate/trust'
import { ListedReceiptStore } from './listed-receipt-store.js'
import { ReceiptLog, RECEIPT_QUERY_INDEXES, RECEIPT_SCHEMA, RECEIPT_TRUST_INDEXES } from './receipt-log.js'
import { ReceiptQuery } from './receipt-query.js'
import { openStoreDatabase } from './revision-stamp.js'
import { openDatabase, resolveDatabaseOptions, type DatabaseOptions, type ResolvedDatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'
import { pickOptions } from './store-options.js'

export * from './receipt-log.js'
export * from './receipt-query.js'
export * from './listed-receipt-store.js'

/** Options of `openReceiptStore`. */
export interface ReceiptStoreOptions extends DatabaseOptions {
  /** Largest group-commit batch, default GROUP_COMMIT_DEFAULTS.maxBatchSize. */
  maxBatchSize?: number
  /** Create the query indexes (timestamp, capability, tool, tenant, subject) at open, default false: they cost ingest. */
  queryIndexes?: boolean
  /** Called once per failed commit (the store is then unhealthy until a commit succeeds). */
  onError?: (err: Error) => void
  /** Called when a commit succeeds after a failure. */
  onRecover?: () => void
}

/** Defaults of the receipt-specific options. */
const RECEIPT_STORE_DEFAULTS = Object.freeze({ maxBatchSize: GROUP_COMMIT_DEFAULTS.maxBatchSize, queryIndexes: false })

const OWN_KEYS = ['maxBatchSize', 'queryIndexes', 'onError', 'onRecover'] as const

/** Opens (creating or migrating) the receipt store at `path`; `:memory:` gives an ephemeral one. */
export async function openReceiptStore(path: string, options: ReceiptStoreOptions = {}): Promise<ReceiptStore> {
  const { own, database } = pickOptions('receipt store options', options, OWN_KEYS)
  const databaseOptions = resolveDatabaseOptions(database)
  const settings = { ...RECEIPT_STORE_DEFAULTS, ...own }
  if (typeof settings.queryIndexes !== 'boolean') throw new InvalidConfigError('receipt store options.queryIndexes', 'a boolean', settings.queryIndexes)
  for (const hook of ['onError', 'onRecover'] as const) {
    if (settings[hook] !== undefined && typeof settings[hook] !== 'function') {
      throw new InvalidConfigError(`receipt store options.${hook}`, 'a function', settings[hook])
    }
  }
  const writer = await openStoreDatabase(RECEIPT_SCHEMA, path, databaseOptions)
  const connections: SqliteDatabase[] = [writer]
  try {
    const log = new ReceiptLog(writer, { maxBatchSize: settings.maxBatchSize, onError: settings.onError, onRecover: settings.onRecover })
    if (settings.queryIndexes) await log.createIndexes(RECEIPT_QUERY_INDEXES)
    let reader = writer
    let openReader: (() => Promise<SqliteDatabase>) | undefined
    if (!writer.isEphemeral) {
      openReader = () => openReaderOf(path, databaseOptions)
      reader = await openReader()
      connections.push(reader)
    }
    const query = new ReceiptQuery(reader, openReader)
    await query.indexNames()
    return new ReceiptStore(log, query, new ListedReceiptStore(writer, reader), connections, databaseOptions)
  } catch (err) {
    for (const db of connections.reverse()) await db.close().catch(() => undefined)
    throw err
  }
}

// A reader sees only committed rows under WAL and never waits for the writer.
async function openReaderOf(path: string, options: ResolvedDatabaseOptions): Promise<SqliteDatabase> {
  const db = await openDatabase(path, options, { store: 'receipts' })
  await db.exec('PRAGMA query_only = ON')
  return db
}

/** The receipt log, its reads and the listed receipts of one file. */
export class ReceiptStore {
  /** Appends (group commit) and followers of its commits. */
  readonly log: ReceiptLog
  /** Reads of committed receipts. */
  readonly query: ReceiptQuery
  /** Tool and child receipts. */
  readonly listed: ListedReceiptStore
  /** The database options the file was opened with (the receipt writer thread opens it with the same). */
  readonly databaseOptions: ResolvedDatabaseOptions
  readonly #connections: readonly SqliteDatabase[]
  #closing: Promise<void> | undefined

  constructor(log: ReceiptLog, query: ReceiptQuery, listed: ListedReceiptStore, connections: readonly SqliteDatabase[], databaseOptions: ResolvedDatabaseOptions) {
    this.log = log
    this.query = query
    this.listed = listed
    this.#connections = connections
    this.databaseOptions = databaseOptions
  }

  get path(): string {
    return this.log.path
  }

  /** True for an in-memory store (the sidecar then reports `receipt_backend: ephemeral`). */
  get isEphemeral(): boolean {
    return this.log.isEphemeral
  }

  /** Creates the query-filter indexes (idempotent). They slow ingest: see the benchmark. */
  async createQueryIndexes(): Promise<void> {
    await this.log.createIndexes(RECEIPT_QUERY_INDEXES)
    await this.query.indexNames()
  }

  /** Creates trust-control's indexes (RECEIPT_TRUST_INDEXES); idempotent. */
  async createTrustIndexes(): Promise<void> {
    await this.log.createIndexes(RECEIPT_TRUST_INDEXES)
    await this.query.indexNames()
  }

  /** Flushes the log, then closes every connection; later appends reject with gate_receipt_persistence_failed. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.log.close()
      await this.query.close()
      for (const db of [...this.#connections].reverse()) await db.close()
    })()
    return this.#closing
  }
}
