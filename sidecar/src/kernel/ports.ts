// What the kernel needs from storage, declared here so the kernel depends on nothing concrete: the
// sidecar wires the SQLite stores in, tests may wire in-memory ones. Receipts go through the one
// ReceiptWriter (stores/receipt-writer.ts).
import type { CapabilityToken, CaptureResult, CapturePlan } from '@gate/sdk'
import type { ReceiptWriter } from '../stores/receipt-writer.js'

export interface RevocationPort {
  isRevoked(capabilityId: string): boolean
  /** Picks up revocations other processes committed to the shared store (revocation-store.ts). */
  refresh?(): Promise<void>
  /**
   * Why the revocation state cannot be trusted now (a remote mirror past its staleness bound,
   * fleet/revocation-mirror.ts); undefined when it can. Requests presenting a capability are then denied.
   */
  unavailable?(): string | undefined
  /**
   * Calls `listener` with each capability id newly revoked (here, by another process on the shared
   * store once `refresh` sees it, or through a fleet's feed); returns an unsubscribe. The native wire
   * pushes capability_revoked from it (docs/wire.md).
   */
  onRevoked?(listener: (capabilityId: string) => void): () => void
}

/** A capture that could not be decided: the budget is held elsewhere and could not be reached (the call is denied). */
export type UnavailableCapture = { allowed: false; failed: { kind: 'unavailable'; reason: string } }

export interface BudgetPort {
  /**
   * Advances every counter of `plan` by one (and adds its cost) only if all of them can be: atomically,
   * committed before it resolves (spec 03: quota sets covering a request are captured atomically).
   */
  capture(plan: CapturePlan): Promise<CaptureResult | UnavailableCapture>
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
  /** Signs and durably stores every receipt (stores/receipt-writer.ts). */
  receipts: ReceiptWriter
  revocations: RevocationPort
  budgets: BudgetPort
  capabilities: IssuedCapabilityPort
  approvals: ApprovalPort
  nonces: NoncePort
}
