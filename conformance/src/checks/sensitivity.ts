// spec 01, Extension keys: x-gate-sensitivity `restricted` always requires approval. Observed through
// Gate's approval flow (docs/approvals.md): a valid capability alone gets the pending-approval deny
// (409), an approved approval allows its call once, and the next call asks again.
import { defineCheck, fail } from '../check.js'
import { encodeToken, grantFor } from '../capability-tokens.js'
import { describeVerdict, expectAllow } from '../expect.js'
import { concretePath } from '../policy.js'

export const SENSITIVITY_CHECKS = [
  defineCheck({
    id: 'capabilities.restricted-requires-approval',
    description: 'an x-gate-sensitivity: restricted route with a valid capability is denied by ApprovalGuard (409, approval handle); once approved it is allowed once, and the next call needs a new approval',
    specRef: '01 Extension keys ("restricted always requires approval"); Gate: docs/approvals.md, docs/kernel.md (sensitivity)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const route = ctx.route('route with x-gate-sensitivity: restricted', r => r.sensitivity === 'restricted' && !r.approvalRequired)
      const capability = encodeToken(await ctx.issueToken([grantFor(route)]))
      const what = `${route.method} ${concretePath(route.pattern)} (restricted) with a valid token`
      const request = () => ctx.requestFor(route)
      const pending = await ctx.evaluate(request(), { capability })
      const v = pending.answer.verdict as { verdict: string; guard?: string; http_status?: number }
      const approval = pending.answer.approval
      if (v.verdict !== 'deny' || v.guard !== 'ApprovalGuard' || v.http_status !== 409 || approval === undefined) {
        fail(`${what}: expected a pending approval (deny by ApprovalGuard, 409, approval handle); got ${describeVerdict(pending)}`)
      }
      await ctx.control().respondToApproval(approval.approval_id, 'approve')
      expectAllow(await ctx.evaluate(request(), { capability, approvalId: approval.approval_id }), `${what} and its approved approval`)
      const again = await ctx.evaluate(request(), { capability, approvalId: approval.approval_id })
      if (again.answer.verdict.verdict !== 'deny') fail(`${what}: the used approval allowed a second call (${describeVerdict(again)})`)
      const next = await ctx.evaluate(request(), { capability })
      if ((next.answer.verdict as { http_status?: number }).http_status !== 409) fail(`${what}: the next call was not asked for an approval (${describeVerdict(next)})`)
    },
  }),
]
