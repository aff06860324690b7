// Routes with x-gate-approval-required (and tools that need approval): the first request creates a
// pending approval and is answered 409; once an approver approves it, the same caller retrying the same
// route (tool) with the same content (arguments) and presenting the approval id is allowed exactly once
// (docs/approvals.md).
import type { ApprovalPort } from '../ports.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class ApprovalGuard implements Guard {
  readonly name = 'ApprovalGuard'
  constructor(
    private readonly approvals: ApprovalPort,
    private readonly newApprovalId: () => string,
  ) {}

  async check(ctx: GuardContext): Promise<GuardOutcome> {
    if (ctx.approvalId !== undefined) {
      const bindings = { callerIdentityHash: ctx.callerIdentityHash, ...ctx.subject.bindings, contentHash: ctx.contentHash }
      if (await this.approvals.consume(ctx.approvalId, bindings, ctx.now)) {
        return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `approval ${ctx.approvalId} consumed` } }
      }
      return deny(this.name, `approval ${ctx.approvalId} is not an unused approval for this caller, route and content`, {
        details: { reason_code: 'approval_invalid', hint: 'request a new approval' },
      })
    }
    const approvalId = this.newApprovalId()
    const outcome = deny(this.name, `approval required for ${ctx.subject.label}`, {
      status: 409,
      details: { reason_code: 'approval_required', hint: `an approver must respond at /approvals/${approvalId}/respond` },
    })
    return { ...outcome, approvalId } as GuardOutcome
  }
}
