// A denied decision as spec 03's ToolCallError. The kernel's deny names its guard and a reason_code
// (docs/kernel.md); the wire keeps both: a revoked or expired capability has its own code, every other
// refusal of the token or its grants is capability_denied, and every other guard's refusal is
// policy_denied naming the guard. The reason text starts with the reason_code, so an agent can branch
// on it, and the receipt (metadata.gate_deny_details) carries the structured details.
import type { ToolCallError } from '@gate/sdk/wire'
import type { WireDecision } from './ports.js'

/** The ToolCallError of a decision that did not allow the call. */
export function toToolCallError(decision: WireDecision, controlUrl: string | undefined): ToolCallError {
  const verdict = decision.verdict
  if (verdict.verdict !== 'deny') return { code: 'internal_error', detail: `the kernel answered ${verdict.verdict} where allow or deny was expected` }
  const details = verdict.details ?? {}
  const code = typeof details.reason_code === 'string' ? details.reason_code : 'denied'
  if (code === 'capability_revoked') return { code: 'capability_revoked' }
  if (code === 'capability_expired') return { code: 'capability_expired' }
  const reason = `${code}: ${verdict.reason}${approvalNote(decision, controlUrl)}`
  if (verdict.guard === 'CapabilityGuard') return { code: 'capability_denied', detail: reason }
  return { code: 'policy_denied', detail: { guard: verdict.guard, reason } }
}

// A pending approval is named so the operator can answer it; the wire has no member to present an
// approved approval on the retry (docs/wire.md, Approvals), so the agent reports it rather than retries.
function approvalNote(decision: WireDecision, controlUrl: string | undefined): string {
  if (decision.approval === undefined) return ''
  return ` (approval ${decision.approval.approval_id} pending: an approver answers POST ${controlUrl ?? ''}${decision.approval.resume_path})`
}
