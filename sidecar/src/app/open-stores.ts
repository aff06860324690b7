// INTERIM (replaced when sidecar/src/stores lands): wires in-memory ports so the process can start
// while the SQLite stores are being finished. Durable paths are accepted but NOT yet durable.
import type { CapabilityToken, Signer } from '@gate/sdk'
import { ConflictError } from '@gate/sdk'
import type { GlobalFlags } from '../config/global-flags.js'
import { createMemoryPorts } from '../testing/memory-ports.js'
import type { ServiceStores } from './service-stores.js'
import type { ApprovalView } from '../routes/context.js'

/** The receipt store path from --receipt-store or --receipt-db; undefined when none or in-memory. */
export function resolveReceiptStore(receiptStore: string | undefined, receiptDb: string | undefined): string | undefined {
  const path = receiptStore ?? receiptDb
  if (path === undefined || path === '' || path === ':memory:' || path.startsWith('file::memory:') || /[?&]mode=memory\b/.test(path)) return undefined
  return path
}

export async function openServiceStores(options: { receiptStore: string | undefined; global: GlobalFlags; signer: Signer }): Promise<ServiceStores> {
  const ports = createMemoryPorts()
  const view = (id: string): ApprovalView | undefined => {
    const r = ports.approvalRecords.get(id)
    return r === undefined ? undefined : { ...r }
  }
  return {
    ports,
    receiptBackend: options.receiptStore === undefined ? 'ephemeral' : 'durable',
    revocationBackend: options.receiptStore === undefined ? 'ephemeral' : 'durable',
    receiptLocation: options.receiptStore ?? 'memory',
    previousKeys: () => [],
    healthy: () => ports.receipts.healthy,
    close: async () => {},
    approvals: {
      get: async id => view(id),
      listPending: async now => [...ports.approvalRecords.values()].filter(a => a.state === 'pending' && a.expiresAt > now).map(a => ({ ...a })),
      respond: async (id, decision, info) => {
        const r = ports.approvalRecords.get(id)
        if (r === undefined) throw new ConflictError(`approval ${id} does not exist`)
        if (r.state !== 'pending') throw new ConflictError(`approval ${id} is already ${r.state}`)
        if (info.now >= r.expiresAt) throw new ConflictError(`approval ${id} has expired`)
        r.state = decision === 'approve' ? 'approved' : 'denied'
        return { ...r, respondedAt: info.now, responder: info.responder ?? null, reason: info.reason ?? null }
      },
    },
    capabilities: {
      remember: async (token: CapabilityToken) => {
        ports.issued.set(token.id, token)
      },
      revoke: async (id: string) => {
        const newlyRevoked = !ports.revoked.has(id)
        ports.revoked.add(id)
        return { revoked: true, newlyRevoked }
      },
    },
  }
}
