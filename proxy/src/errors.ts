// The only place @gate/proxy's error classes live. Wire codes come from @gate/sdk's errors.ts (the
// proxy adds none): spec 01 names the proxy's failures by `ProtectError` kind, and spec 03 names the
// egress rejections of spec auto-discovery.
import { GateError, type GateErrorCode } from '@gate/sdk'

// ---- ProtectError (spec 01, Errors) ----

/** The kinds of spec 01's `ProtectError`, in the spec's order. */
export type ProtectErrorKind =
  | 'SpecLoad'
  | 'SpecParse'
  | 'Config'
  | 'Upstream'
  | 'Evaluation'
  | 'PendingApproval'
  | 'ReceiptSign'
  | 'ReceiptStore'
  | 'Io'
  | 'HttpClient'

export const PROTECT_ERROR_KINDS: readonly ProtectErrorKind[] = Object.freeze([
  'SpecLoad',
  'SpecParse',
  'Config',
  'Upstream',
  'Evaluation',
  'PendingApproval',
  'ReceiptSign',
  'ReceiptStore',
  'Io',
  'HttpClient',
])

// Startup kinds are gate_invalid_config (they end the process, never reach the wire). Upstream and
// HttpClient answer 502, which spec 01 gives no error code: the proxy writes that answer as plain
// text (proxy-answers.ts), so the code below is only what a library caller branches on.
const KIND_CODE: Record<ProtectErrorKind, { code: GateErrorCode; status?: number }> = {
  SpecLoad: { code: 'gate_invalid_config' },
  SpecParse: { code: 'gate_invalid_config' },
  Config: { code: 'gate_invalid_config' },
  Upstream: { code: 'gate_evaluation_failed', status: 502 },
  Evaluation: { code: 'gate_evaluation_failed' },
  PendingApproval: { code: 'gate_approval_required' },
  ReceiptSign: { code: 'gate_receipt_sign_failed' },
  ReceiptStore: { code: 'gate_receipt_persistence_failed' },
  Io: { code: 'gate_evaluation_failed' },
  HttpClient: { code: 'gate_evaluation_failed', status: 502 },
}

/** A failure of `gate api protect`; branch on `kind`. The message starts with the kind. */
export class ProtectError extends GateError {
  readonly kind: ProtectErrorKind
  readonly detail: string

  constructor(kind: ProtectErrorKind, detail: string, cause?: unknown) {
    const { code, status } = KIND_CODE[kind]
    super(code, `${kind}: ${detail}`, { cause, status })
    this.name = 'ProtectError'
    this.kind = kind
    this.detail = detail
  }
}

/** True for a ProtectError, even one thrown by another installed copy of this package. */
export function isProtectError(value: unknown): value is ProtectError {
  if (!(value instanceof Error)) return false
  const e = value as Partial<ProtectError>
  return e.name === 'ProtectError' && (PROTECT_ERROR_KINDS as readonly unknown[]).includes(e.kind)
}

/** Spec 01: an approval-gated route answered 409; carries the approval handle and the kernel's receipt. */
export class PendingApprovalError extends ProtectError {
  readonly approvalId: string | undefined
  readonly kernelReceiptId: string

  constructor(reason: string, details: { approvalId?: string; kernelReceiptId: string }) {
    super('PendingApproval', reason)
    this.approvalId = details.approvalId
    this.kernelReceiptId = details.kernelReceiptId
    // the 409 body's message is the verdict's reason, without the kind prefix
    this.message = reason
  }
}

/** A deny verdict (spec 01, 403 denial body); the status is the verdict's `http_status`. */
export class AccessDeniedError extends GateError {
  constructor(reason: string, status: number) {
    super('gate_access_denied', reason, { status })
    this.name = 'AccessDeniedError'
  }
}

// ---- egress (spec 03, "Egress rejections") ----

/** The egress rejections of spec 03 the proxy's pinned discovery client can raise. */
export type EgressRejection =
  | 'LoopbackDenied'
  | 'LinkLocalDenied'
  | 'Ipv6UlaDenied'
  | 'PrivateNetworkDenied'
  | 'UserinfoDenied'
  | 'SchemeDenied'
  | 'AuthorityDenied'
  | 'RedirectLimitExceeded'
  | 'ResponseTooLarge'

/** An outbound request refused by the egress contract; `rejection` is spec 03's name. */
export class EgressDeniedError extends GateError {
  readonly rejection: EgressRejection

  constructor(rejection: EgressRejection, detail: string) {
    super('gate_forbidden', `${rejection}: ${detail}`)
    this.name = 'EgressDeniedError'
    this.rejection = rejection
  }
}
