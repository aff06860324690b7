// What the kernel needs from storage, declared here so the kernel depends on nothing concrete: the
// sidecar wires the SQLite stores in, tests may wire in-memory ones.
import type { CapabilityToken, HttpMethod } from '@gate/sdk'

/** One signed receipt plus the columns the stores index. `json` is stored and served byte for byte. */
export interface ReceiptRecord {
  receiptId: string
  json: string
  timestamp: number
  requestId: string
  method: HttpMethod
  routePattern: string
  toolName: string
  outcome: 'allow' | 'deny' | 'cancelled' | 'incomplete'
  capabilityId: string | null
  tenant: string | null
  subjectKey: string | null
  kind: 'decision' | 'final'
  decisionReceiptId: string | null
}

export interface ReceiptSink {
  /** Resolves once the receipt is durably committed; rejects with gate_receipt_persistence_failed. */
  append(record: ReceiptRecord): Promise<void>
  /** False once the store failed; evaluation then fails closed. */
  readonly healthy: boolean
}

export interface RevocationPort {
  isRevoked(capabilityId: string): boolean
}

export interface BudgetPort {
  /** Atomically counts one invocation of `grantKey` under `capabilityId` if fewer than `max` were used. */
  tryConsume(capabilityId: string, grantKey: string, max: number): Promise<{ allowed: boolean; used: number }>
}

export interface IssuedCapabilityPort {
  /** A token this sidecar issued, by id. */
  get(capabilityId: string): CapabilityToken | undefined
}

export interface ApprovalRecord {
  approvalId: string
  requestId: string
  callerIdentityHash: string
  method: string
  routePattern: string
  contentHash: string
  decisionReceiptId: string
  state: 'pending' | 'approved' | 'denied' | 'consumed' | 'expired'
  createdAt: number
  expiresAt: number
}

export interface ApprovalBindings {
  callerIdentityHash: string
  method: string
  routePattern: string
  contentHash: string
}

export interface ApprovalPort {
  create(record: Omit<ApprovalRecord, 'state'>): Promise<void>
  get(approvalId: string): Promise<ApprovalRecord | undefined>
  /** Consumes an approved approval exactly once when the bindings match and it has not expired. */
  consume(approvalId: string, bindings: ApprovalBindings, now: number): Promise<boolean>
}

export interface NonceBindings {
  callerIdentityHash: string
  method: string
  routePattern: string
  contentHash: string
}

export interface NoncePort {
  issue(record: NonceBindings & { nonceId: string; requestId: string; expiresAt: number }): Promise<void>
  consume(
    nonceId: string,
    bindings: NonceBindings,
    now: number,
  ): Promise<{ ok: true; requestId: string } | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'mismatch' }>
}

export interface KernelPorts {
  receipts: ReceiptSink
  revocations: RevocationPort
  budgets: BudgetPort
  capabilities: IssuedCapabilityPort
  approvals: ApprovalPort
  nonces: NoncePort
}
