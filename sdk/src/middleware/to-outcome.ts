// Verdict → outcome (spec 02, States and transitions; spec 01, Proxy error bodies) and error → outcome.
// The one place the middleware assembles error bodies (STYLE, Errors).
import { isGateError, WIRE_ERROR_CODES as WIRE_CODES, type GateErrorCode } from '../errors.js'
import type { GateErrorBody } from '../types.js'
import { CAPABILITY_HEADER } from './gate-headers.js'
import type { GateAllowed, GateContext, GateDenied } from './gate-types.js'
import type { SidecarEvaluation } from './sidecar-client.js'

const RECEIPT_HEADER = 'x-gate-receipt-id'
const FAIL_OPEN_HEADER = 'x-gate-fail-open'
// once Gate has decided, the handlers never see the capability it presented
const GATED_REMOVE_HEADERS: readonly string[] = Object.freeze([CAPABILITY_HEADER])


const SUGGESTIONS: Partial<Record<GateErrorCode, string>> = {
  gate_bad_request: 'fix the request as the message describes and send it again',
  gate_payload_too_large: 'send a smaller request body',
  gate_sidecar_unreachable: 'the service cannot reach its authorization sidecar; retry later',
  gate_timeout: 'the authorization sidecar did not answer in time; retry later',
  gate_sidecar_unavailable: 'the authorization sidecar cannot verify decisions right now; retry later',
  gate_evaluation_failed: 'the authorization sidecar gave no usable answer; retry later',
  gate_invalid_receipt: 'the authorization decision could not be verified; the request was refused',
}

const CAPABILITY_SUGGESTION = 'present a valid capability token in the X-Gate-Capability header or the gate_capability query parameter'
const REASON_SUGGESTIONS: Record<string, string> = {
  capability_revoked: 'the capability token has been revoked; request a fresh token',
  capability_required: CAPABILITY_SUGGESTION,
}

/** The outcome of a verified evaluation. */
export function toOutcome(answer: SidecarEvaluation, context: GateContext, body: Uint8Array | null, rawQuery: string | null): GateAllowed | GateDenied {
  const { verdict, receipt } = answer
  const headers = { [RECEIPT_HEADER]: receipt.id }
  switch (verdict.verdict) {
    case 'allow':
      return { allowed: true, headers, gate: context, body, rawQuery, removeHeaders: GATED_REMOVE_HEADERS }
    case 'deny': {
      const status = verdict.http_status ?? 403
      if (verdict.details?.reason_code === 'approval_required' || (status === 409 && verdict.guard === 'ApprovalGuard')) {
        const approval = answer.approval
        const body: GateErrorBody = {
          error: 'gate_approval_required',
          message: verdict.reason,
          kernel_receipt_id: receipt.id,
          ...(approval === undefined ? {} : { approval_id: approval.approval_id, resume_path: approval.resume_path }),
          suggestion: approval === undefined ? null : `once approved, retry the same request with X-Gate-Approval-Id: ${approval.approval_id}`,
        }
        return { allowed: false, status: 409, headers, body }
      }
      const reasonCode = verdict.details?.reason_code ?? ''
      const suggestion = REASON_SUGGESTIONS[reasonCode] ?? verdict.details?.hint ?? (verdict.guard === 'CapabilityGuard' ? CAPABILITY_SUGGESTION : null)
      return { allowed: false, status, headers, body: { error: 'gate_access_denied', message: verdict.reason, receipt_id: receipt.id, suggestion } }
    }
    // spec 02: cancel and incomplete are treated as denied; the body is the evaluate response
    case 'cancel':
      return { allowed: false, status: 500, headers, body: answer }
    case 'incomplete':
      return { allowed: false, status: 428, headers, body: answer }
  }
}

/** The outcome of a failure before or instead of a verified verdict: never a pass. */
export function toErrorOutcome(err: unknown, extraHeaders: Record<string, string> = {}): GateDenied {
  const gateError = isGateError(err) && WIRE_CODES.has(err.code) ? err : undefined
  const code = gateError?.code ?? 'gate_evaluation_failed'
  const status = gateError?.status ?? 500
  const message = gateError?.message ?? 'the request could not be evaluated'
  return { allowed: false, status, headers: extraHeaders, body: { error: code, message, receipt_id: null, suggestion: SUGGESTIONS[code] ?? null } }
}

/** The outcome of a fail-open pass: visible in a response header, never silent. */
export function toFailOpenOutcome(code: string, context: GateContext, body: Uint8Array | null, rawQuery: string | null): GateAllowed {
  return { allowed: true, headers: { [FAIL_OPEN_HEADER]: code }, gate: context, body, rawQuery, removeHeaders: GATED_REMOVE_HEADERS }
}
