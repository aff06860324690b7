// In-memory implementations of the kernel ports, for kernel unit tests (the real process uses the
// SQLite stores; the end-to-end tests exercise those). Receipts go through the real inline writer into
// an array.
import type { CapabilityToken, Signer } from '@gate/sdk'
import type { KernelPorts, NewApprovalRecord } from '../kernel/ports.js'
import type { ReceiptRow } from '../stores/receipt-log.js'
import { createInlineReceiptWriter } from '../stores/receipt-writer.js'

export interface ApprovalRecord extends NewApprovalRecord {
  state: 'pending' | 'approved' | 'denied' | 'consumed'
}

export interface MemoryPorts extends KernelPorts {
  stored: ReceiptRow[]
  revoked: Set<string>
  issued: Map<string, CapabilityToken>
  approvalRecords: Map<string, ApprovalRecord>
  failAppends: boolean
}

/** Ports over memory; receipts are signed by `signer` (the kernel's own, or one that fails on cue). */
export function createMemoryPorts(signer: Signer): MemoryPorts {
  const stored: ReceiptRow[] = []
  const revoked = new Set<string>()
  const issued = new Map<string, CapabilityToken>()
  const used = new Map<string, number>()
  const approvalRecords = new Map<string, ApprovalRecord>()
  const nonces = new Map<string, { requestId: string; expiresAt: number; used: boolean; bindings: string }>()
  const ports: MemoryPorts = {
    stored,
    revoked,
    issued,
    approvalRecords,
    failAppends: false,
    receipts: createInlineReceiptWriter({
      signer: () => signer,
      log: {
        async append(row) {
          if (ports.failAppends) throw Object.assign(new Error('disk full'), { code: 'gate_receipt_persistence_failed' })
          stored.push(row)
          return { seq: stored.length }
        },
        onCommitted: () => () => undefined,
        close: async () => undefined,
        get healthy() {
          return !ports.failAppends
        },
      },
    }),
    revocations: { isRevoked: id => revoked.has(id) },
    capabilities: { get: async id => issued.get(id) },
    budgets: {
      async tryConsume(id, key, max) {
        const k = `${id}\u0000${key}`
        const n = used.get(k) ?? 0
        if (n >= max) return { allowed: false, used: n }
        used.set(k, n + 1)
        return { allowed: true, used: n + 1 }
      },
    },
    approvals: {
      async create(r) {
        approvalRecords.set(r.approvalId, { ...r, state: 'pending' })
      },
      async consume(id, b, now) {
        const r = approvalRecords.get(id)
        if (r === undefined || r.state !== 'approved' || now >= r.expiresAt) return false
        if (r.callerIdentityHash !== b.callerIdentityHash || r.method !== b.method || r.routePattern !== b.routePattern || r.contentHash !== b.contentHash) return false
        r.state = 'consumed'
        return true
      },
    },
    nonces: {
      async issue(r) {
        nonces.set(r.nonceId, { requestId: r.requestId, expiresAt: r.expiresAt, used: false, bindings: JSON.stringify([r.callerIdentityHash, r.method, r.routePattern, r.contentHash]) })
      },
      async consume(id, b, now) {
        const n = nonces.get(id)
        if (n === undefined) return { ok: false, reason: 'unknown' }
        if (n.used) return { ok: false, reason: 'used' }
        if (now >= n.expiresAt) return { ok: false, reason: 'expired' }
        if (n.bindings !== JSON.stringify([b.callerIdentityHash, b.method, b.routePattern, b.contentHash])) return { ok: false, reason: 'mismatch' }
        n.used = true
        return { ok: true, requestId: n.requestId }
      },
    },
  }
  return ports
}
