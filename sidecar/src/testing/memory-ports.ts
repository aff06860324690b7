// In-memory implementations of the kernel ports, for kernel unit tests (the real process uses the
// SQLite stores; the end-to-end tests exercise those). Receipts go through the real inline writer into
// an array.
import type { CapabilityToken, Signer } from '@gate/sdk'
import type { KernelPorts, NewApprovalRecord } from '../kernel/ports.js'
import type { ReceiptRow } from '@gate/trust'
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
  const used = new Map<string, { used: number; max: number }>()
  const costs = new Map<string, number>()
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
        flush: async () => undefined,
        close: async () => undefined,
        get healthy() {
          return !ports.failAppends
        },
      },
    }),
    revocations: { isRevoked: id => revoked.has(id) },
    capabilities: { get: async id => issued.get(id) },
    budgets: {
      async capture(plan) {
        const counts: number[] = []
        for (const [index, c] of plan.invocations.entries()) {
          const row = used.get(`${c.owner}\u0000${c.key}`)
          if (c.fixedMax && row !== undefined && row.max !== c.max) return { allowed: false, failed: { kind: 'max_mismatch', index, recordedMax: row.max } }
          if ((row?.used ?? 0) >= c.max) return { allowed: false, failed: { kind: 'invocation', index, used: row?.used ?? 0 } }
          counts.push((row?.used ?? 0) + 1)
        }
        const costKeys = plan.costs.map(c => `${c.owner}\u0000${c.key}\u0000${c.currency}`)
        const totals: number[] = []
        for (const [index, c] of plan.costs.entries()) {
          const charged = costs.get(costKeys[index]!) ?? 0
          if (charged + c.units > c.maxUnits) return { allowed: false, failed: { kind: 'cost', index, units: charged } }
          totals.push(charged + c.units)
        }
        plan.invocations.forEach((c, i) => used.set(`${c.owner}\u0000${c.key}`, { used: counts[i]!, max: c.max }))
        costKeys.forEach((key, i) => costs.set(key, totals[i]!))
        return { allowed: true, used: counts, costUnits: totals }
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
