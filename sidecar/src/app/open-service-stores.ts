// Opens a service's SQLite stores, chooses its receipt writer once, and adapts them to the kernel ports
// and the route contexts.
import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { publicKeyOfKeyBytes, type Signer } from '@gate/sdk'
import type { Authority } from '../config/authority-seed.js'
import type { GlobalFlags } from '../config/global-flags.js'
import type { ApprovalRecord } from '@gate/trust'
import { closeSqliteStores, createInlineReceiptWriter, isInMemoryPath, openSqliteStores, type ReceiptWriter, type SqliteStores } from '../stores/index.js'
import { startThreadedReceiptWriter } from '../stores/threaded-receipt-writer.js'
import type { ApprovalView } from '../routes/context.js'
import type { ServiceStores } from './service-stores.js'

export interface OpenServiceStoresOptions {
  /** Durable receipt path, or undefined for in-memory stores (--allow-ephemeral-receipts). */
  receiptStore: string | undefined
  global: GlobalFlags
  /** The signing key: the receipt writer's, and the kernel's. */
  authority: Pick<Authority, 'signer' | 'seed'>
  log: (line: string) => void
}

export async function openServiceStores(options: OpenServiceStoresOptions): Promise<ServiceStores> {
  const receiptDb = options.receiptStore ?? ':memory:'
  for (const path of [options.receiptStore, options.global.revocationDb, options.global.budgetDb]) {
    if (path !== undefined && !isInMemoryPath(path)) await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  }
  const stores = await openSqliteStores({
    receiptDb,
    revocationDb: options.global.revocationDb,
    budgetDb: options.global.budgetDb,
    derivePublicKey: publicKeyOfKeyBytes,
  })
  const { signer, seed } = options.authority
  // The receipt writer, chosen here once: a durable store gets the writer thread (signing and commits
  // off the event loop), an in-memory one (which a second connection cannot share) the inline writer.
  const inline = createInlineReceiptWriter({ signer: () => signer, log: stores.receipts.log })
  const receipts = stores.isEphemeral ? inline : await startThreadedReceiptWriter({ store: stores.receipts, seed, fallback: inline, log: options.log, mainConnection: stores.receipts.log })
  return adaptStores(stores, signer, receipts, receipts === inline ? 'signed and committed on the main thread' : 'signed and committed on the receipt writer thread')
}

/** The kernel ports and route admin views over opened stores; every receipt goes through `receipts`. */
function adaptStores(stores: SqliteStores, signer: Signer, receipts: ReceiptWriter, writing: string): ServiceStores {
  const view = (r: ApprovalRecord, now: number): ApprovalView => ({
    ...r,
    decisionReceiptId: r.decisionReceiptId ?? '',
    state: r.consumedAt !== null ? 'consumed' : r.state === 'pending' && now >= r.expiresAt ? 'expired' : r.state,
  })
  const now = () => Math.floor(Date.now() / 1000)
  return {
    ports: {
      receipts,
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
      : `sqlite ${stores.paths.receipts} (${stores.receipts.log.driver}, ${writing})`,
    previousKeys: () => stores.authority.trustedPublicKeys().filter(k => k !== signer.publicKey),
    healthy: () => receipts.healthy,
    close: async () => {
      await receipts.close()
      await closeSqliteStores(stores)
    },
    raw: stores,
  }
}
