// What the route modules share: the kernel, the stores they read, control auth and identity.
import type { Tracer } from '@opentelemetry/api'
import type { Kernel } from '../kernel/kernel.js'
import type { ControlAuth } from '../http/control-auth.js'
import type { CapabilityToken } from '@gate/sdk'
import type { FleetHealth } from '../fleet/fleet-health.js'

export interface ApprovalView {
  approvalId: string
  requestId: string
  method: string
  routePattern: string
  callerIdentityHash: string
  contentHash: string
  decisionReceiptId: string
  state: string
  createdAt: number
  expiresAt: number
  respondedAt?: number | null
  responder?: string | null
  reason?: string | null
}

export interface ApprovalAdmin {
  get(id: string): Promise<ApprovalView | undefined>
  listPending(now: number): Promise<ApprovalView[]>
  respond(id: string, decision: 'approve' | 'deny', info: { responder?: string; reason?: string; now: number }): Promise<ApprovalView>
}

export interface CapabilityAdmin {
  /** Remembers a token this sidecar issued (for `capability_id` lookups). */
  remember(token: CapabilityToken): Promise<void>
  revoke(capabilityId: string): Promise<{ revoked: boolean; newlyRevoked: boolean }>
}

export interface RouteContext {
  kernel: Kernel
  version: string
  receiptBackend: 'durable' | 'ephemeral'
  revocationBackend: 'durable' | 'remote' | 'ephemeral'
  /** False once the receipt store failed: /gate/health answers 503 and evaluation fails closed. */
  receiptStoreHealthy(): boolean
  controlAuth: ControlAuth
  approvals: ApprovalAdmin
  capabilities: CapabilityAdmin
  /** The link to trust-control's state for /gate/health (absent without --control-url). */
  fleet?: () => FleetHealth
  log: (line: string) => void
  /** Set when tracing is on (observability/tracing.ts); undefined keeps every route untraced. */
  tracer?: Tracer
}
