// What the kernel needs from storage, declared here so the kernel depends on nothing concrete: the
// sidecar wires the SQLite stores in, tests may wire in-memory ones.
import type { CapabilityToken, HttpMethod } from '@gate/sdk'

/** One signed receipt plus the columns the stores index. `httpJson` is stored and served byte for byte. */
export interface ReceiptRecord {
  receiptId: string
  httpJson: string
  timestamp: number
  requestId: string
  method: HttpMethod
  routePattern: string
  /** Always `http`: the core receipt's tool server for HTTP receipts. */
  toolServer: 'http'
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
  append(record: ReceiptRecord): Promise<unknown>
  /** False once the store failed; evaluation then fails closed. */
  readonly healthy: boolean
}

export interface RevocationPort {
  isRevoked(capabilityId: string): boolean
  /** Picks up revocations other processes committed to the shared store (revocation-store.ts). */
  refresh?(): Promise<void>
}

export interface BudgetPort {
  /** Atomically counts one invocation of `grantKey` under `capabilityId` if fewer than `max` were used. */
  tryConsume(capabilityId: string, grantKey: string, max: number): Promise<{ allowed: boolean; used: number }>
}

export interface IssuedCapabilityPort {
  /** A token this sidecar issued, by id. */
  get(capabilityId: string): Promise<CapabilityToken | undefined>
}

export interface NewApprovalRecord {
  approvalId: string
  requestId: string
  callerIdentityHash: string
  method: string
  routePattern: string
  contentHash: string
  decisionReceiptId: string
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
  /** Records a pending approval; resolves once committed. */
  create(record: NewApprovalRecord): Promise<unknown>
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
