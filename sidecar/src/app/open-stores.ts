// Opens the SQLite stores for a service and adapts them to the kernel ports and the route contexts.
import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { publicKeyFor, type Signer } from '@gate/sdk'
import type { GlobalFlags } from '../config/global-flags.js'
import { closeStores, isInMemoryPath, openStores, type ApprovalRecord, type Stores } from '../stores/index.js'
import type { ApprovalView } from '../routes/context.js'
import type { ServiceStores } from './service-stores.js'

/** The receipt store path from --receipt-store or --receipt-db; undefined when none or in-memory. */
export function resolveReceiptStore(receiptStore: string | undefined, receiptDb: string | undefined): string | undefined {
  const path = receiptStore ?? receiptDb
  return path === undefined || isInMemoryPath(path) ? undefined : path
}

export interface OpenServiceStoresOptions {
  /** Durable receipt path, or undefined for in-memory stores (--allow-ephemeral-receipts). */
  receiptStore: string | undefined
  global: GlobalFlags
  signer: Signer
  /** Create the receipt query indexes (trust-control reads). */
  queryIndexes?: boolean
  onReceiptError?: (err: Error) => void
  /** The receipt store's WAL checkpoint thread could not start or failed (not fatal). */
  onCheckpointError?: (err: Error) => void
  /** Commit receipt appends on a thread of their own (node:sqlite only; `gate api protect`). */
  receiptAppendThread?: boolean
  /** The receipt store's append thread could not start or failed (not fatal; node:sqlite only). */
  onAppendThreadError?: (err: Error) => void
}

export async function openServiceStores(options: OpenServiceStoresOptions): Promise<ServiceStores> {
  const receiptDb = options.receiptStore ?? ':memory:'
  for (const path of [options.receiptStore, options.global.revocationDb, options.global.budgetDb]) {
    if (path !== undefined && !isInMemoryPath(path)) await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  }
  const stores = await openStores({
    receiptDb,
    revocationDb: options.global.revocationDb,
    budgetDb: options.global.budgetDb,
    derivePublicKey: seed => publicKeyFor(seed),
    receiptQueryIndexes: options.queryIndexes,
    onReceiptError: options.onReceiptError,
    onCheckpointError: options.onCheckpointError,
    receiptAppendThread: options.receiptAppendThread,
    onAppendThreadError: options.onAppendThreadError,
  })
  return adaptStores(stores, options.signer)
}

/** The kernel ports and route admin views over opened stores. */
export function adaptStores(stores: Stores, signer: Signer): ServiceStores {
  const view = (r: ApprovalRecord, now: number): ApprovalView => ({
    ...r,
    decisionReceiptId: r.decisionReceiptId ?? '',
    state: r.consumedAt !== null ? 'consumed' : r.state === 'pending' && now >= r.expiresAt ? 'expired' : r.state,
  })
  const now = () => Math.floor(Date.now() / 1000)
  return {
    ports: {
      receipts: stores.receipts,
      revocations: stores.revocations,
      budgets: stores.budgets,
      capabilities: stores.capabilities,
      approvals: stores.approvals,
      nonces: stores.nonces,
    },
    approvals: {
      get: async id => {
        const r = await stores.approvals.get(id)
        return r === undefined ? undefined : view(r, now())
      },
      listPending: async at => (await stores.approvals.listPending(at)).map(r => view(r, at)),
      respond: async (id, decision, info) => view(await stores.approvals.respond(id, decision, { responder: info.responder, reason: info.reason, now: info.now }), info.now),
    },
    capabilities: {
      remember: token => stores.capabilities.remember(token),
      revoke: id => stores.revocations.revoke(id),
    },
    receiptBackend: stores.isEphemeral ? 'ephemeral' : 'durable',
    revocationBackend: stores.revocations.isEphemeral ? 'ephemeral' : 'durable',
    receiptLocation: stores.isEphemeral
      ? 'in memory, lost on restart'
      : `sqlite ${stores.paths.receipts} (${stores.receipts.driver}${stores.receipts.appendsOnThread ? ', appends on their own thread once the first receipt starts it' : ''})`,
    previousKeys: () => stores.authority.trustedPublicKeys().filter(k => k !== signer.publicKey),
    healthy: () => stores.receipts.healthy,
    close: () => closeStores(stores),
    raw: stores,
  }
}
