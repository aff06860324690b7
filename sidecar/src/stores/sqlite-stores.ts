// Opens the seven SQLite stores of one host from one receipt path (siblings derived, explicit paths win) and closes
// them in order: receipts first, so every receipt an evaluate is waiting on is flushed before anything else.
import { InvalidConfigError } from '@gate/sdk'
import { openApprovalStore, type ApprovalStore } from './approval-store.js'
import { openAuthorityStore, type AuthorityStore } from './authority-store.js'
import { openCapabilityStore, type CapabilityStore } from './capability-store.js'
import { openBudgetStore, type BudgetStore } from './budget-store.js'
import { openNonceStore, type NonceStore } from './nonce-store.js'
import { openReceiptStore, type ReceiptStore } from './receipt-store.js'
import { openRevocationStore, type RevocationStore } from './revocation-store.js'
import { resolveDatabaseOptions, type DatabaseOptions } from './sqlite-driver.js'
import { checkFunctionOption, pickOptions } from './store-options.js'
import { deriveStorePaths, isInMemoryPath, type StorePaths } from './store-paths.js'

/** Options of `openSqliteStores`. */
export interface SqliteStoresOptions extends DatabaseOptions {
  /** Receipt store path (`--receipt-store` / `--receipt-db`); `:memory:` or empty for ephemeral stores. Required. */
  receiptDb: string
  /** `--revocation-db`, default `<receipt stem>.revocations<ext>`. */
  revocationDb?: string
  /** `--budget-db`, default `<receipt stem>.budgets<ext>`. */
  budgetDb?: string
  /** `--approval-db`, default `<receipt stem>.approvals<ext>`. */
  approvalDb?: string
  /** `--nonce-db`, default `<receipt stem>.nonces<ext>`. */
  nonceDb?: string
  /** `--authority-db`, default `<receipt stem>.authority<ext>`. */
  authorityDb?: string
  /** `--capability-db`, default `<receipt stem>.capabilities<ext>`. */
  capabilityDb?: string
  /** Public key of an authority seed (the signer's). Required. */
  derivePublicKey: (seed: Uint8Array) => string
  /** Largest group-commit batch of each queue, default GROUP_COMMIT_DEFAULTS.maxBatchSize. */
  maxBatchSize?: number
  /** Clock in Unix seconds, default the system clock (each store's own default). */
  now?: () => number
}

/** The open stores. */
export interface SqliteStores {
  paths: StorePaths
  /** True when the receipt store is in memory (`receipt_backend: ephemeral`). */
  isEphemeral: boolean
  receipts: ReceiptStore
  revocations: RevocationStore
  budgets: BudgetStore
  approvals: ApprovalStore
  nonces: NonceStore
  authority: AuthorityStore
  capabilities: CapabilityStore
}

const OWN_KEYS = [
  'receiptDb',
  'revocationDb',
  'budgetDb',
  'approvalDb',
  'nonceDb',
  'authorityDb',
  'capabilityDb',
  'derivePublicKey',
  'maxBatchSize',
  'now',
] as const

/** Opens every store; on a failure closes the ones already open and rethrows. */
export async function openSqliteStores(options: SqliteStoresOptions): Promise<SqliteStores> {
  const { own, database } = pickOptions('stores options', options, OWN_KEYS)
  if (typeof own.receiptDb !== 'string') throw new InvalidConfigError('stores options.receiptDb', 'a path or ":memory:"', own.receiptDb)
  for (const key of ['revocationDb', 'budgetDb', 'approvalDb', 'nonceDb', 'authorityDb', 'capabilityDb'] as const) {
    if (own[key] !== undefined && typeof own[key] !== 'string') throw new InvalidConfigError(`stores options.${key}`, 'a path', own[key])
  }
  checkFunctionOption('stores options.derivePublicKey', own.derivePublicKey, true)
  checkFunctionOption('stores options.now', own.now)
  const db = resolveDatabaseOptions(database, 'stores options')
  const now = own.now
  const paths = deriveStorePaths(own.receiptDb, {
    revocations: own.revocationDb,
    budgets: own.budgetDb,
    approvals: own.approvalDb,
    nonces: own.nonceDb,
    authority: own.authorityDb,
    capabilities: own.capabilityDb,
  })
  const opened: { close(): Promise<void> }[] = []
  const track = <S extends { close(): Promise<void> }>(store: S): S => {
    opened.push(store)
    return store
  }
  try {
    const receipts = track(
      await openReceiptStore(paths.receipts, { ...db, maxBatchSize: own.maxBatchSize }),
    )
    const revocations = track(await openRevocationStore(paths.revocations, { ...db, now }))
    const budgets = track(await openBudgetStore(paths.budgets, { ...db, now, maxBatchSize: own.maxBatchSize }))
    const approvals = track(await openApprovalStore(paths.approvals, { ...db, now }))
    const nonces = track(await openNonceStore(paths.nonces, { ...db, now, maxBatchSize: own.maxBatchSize }))
    const authority = track(await openAuthorityStore(paths.authority, { ...db, now, derivePublicKey: own.derivePublicKey! }))
    const capabilities = track(await openCapabilityStore(paths.capabilities, db))
    return { paths, isEphemeral: isInMemoryPath(paths.receipts), receipts, revocations, budgets, approvals, nonces, authority, capabilities }
  } catch (err) {
    for (const store of opened.reverse()) await store.close().catch(() => undefined)
    throw err
  }
}

/** Flushes and closes every store, receipts first; rethrows the first failure after trying them all. */
export async function closeSqliteStores(stores: SqliteStores): Promise<void> {
  let first: unknown
  for (const store of [stores.receipts, stores.budgets, stores.nonces, stores.approvals, stores.revocations, stores.authority, stores.capabilities]) {
    try {
      await store.close()
    } catch (err) {
      first ??= err
    }
  }
  if (first !== undefined) throw first
}
