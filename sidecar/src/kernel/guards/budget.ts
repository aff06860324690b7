// Runs last, so a request denied by any other guard never spends anything. Checks the declared cost
// (governed_intent.max_amount) against the route's x-gate-budget-limit, then captures, atomically and
// committed before the answer, every counter the matched grant and the token advance (@gate/sdk
// planCaptures): the grant's max_invocations and max_total_cost, the token's aggregate invocation budget
// (its own, or its delegation family's shared counter) and its budget share.
import { planCaptures, type InvocationCapture } from '@gate/sdk'
import type { BudgetPort } from '../ports.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class BudgetGuard implements Guard {
  readonly name = 'BudgetGuard'
  constructor(private readonly budgets: BudgetPort) {}

  async check(ctx: GuardContext): Promise<GuardOutcome> {
    if (ctx.declaredCostProblem !== undefined) {
      return deny(this.name, `the declared cost cannot be read: ${ctx.declaredCostProblem}`, { details: { reason_code: 'cost_malformed' } })
    }
    const cost = ctx.declaredCost
    const limit = ctx.subject.budgetLimit
    if (limit !== undefined && cost !== undefined && BigInt(cost.units) > limit) {
      ctx.costRefused = true
      return deny(this.name, `declared cost ${cost.units} exceeds the route's budget limit ${limit}`, { details: { reason_code: 'budget_limit_exceeded' } })
    }
    const token = ctx.verifiedToken
    const matched = ctx.grant
    if (token === undefined || matched === undefined) return this.#charged(ctx)
    const plan = planCaptures(token, matched.index, matched.grant, cost)
    if (plan.invocations.length === 0 && plan.cost === undefined) return this.#charged(ctx)
    const result = await this.budgets.capture(plan)
    if (!result.allowed) {
      const { failed } = result
      if (failed.kind === 'unavailable') {
        // fail closed: the counters are shared across the fleet and could not be captured
        return deny(this.name, `capability ${token.id}: its budget could not be captured: ${failed.reason}`, {
          details: { reason_code: 'budget_authority_unreachable', hint: 'retry once trust-control is reachable' },
        })
      }
      if (failed.kind === 'cost') {
        ctx.costRefused = true
        return deny(this.name, `capability ${token.id}: the declared cost ${cost!.units} would bring the grant's total to more than max_total_cost ${plan.cost!.maxUnits} (${failed.units} charged so far)`, {
          details: { reason_code: 'total_cost_exceeded', hint: 'request a new capability token' },
        })
      }
      const capture = plan.invocations[failed.index] as InvocationCapture
      if (failed.kind === 'max_mismatch') {
        return deny(this.name, `capability ${token.id} names a delegation family budget of ${capture.max} invocations, but the family's counter was created with ${failed.recordedMax}`, {
          details: { reason_code: 'family_budget_mismatch' },
        })
      }
      return exhausted(this.name, token.id, capture, failed.used)
    }
    ctx.charge = { grantIndex: matched.index }
    if (plan.cost !== undefined && result.costUnits !== undefined) {
      ctx.charge.budgetTotal = plan.cost.maxUnits
      ctx.charge.budgetRemaining = plan.cost.maxUnits - result.costUnits
    }
    const counted = plan.invocations.map((c, i) => `${c.kind} ${result.used[i]} of ${c.max}`)
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: counted.length > 0 ? `invocation counted: ${counted.join(', ')}` : `cost ${cost!.units} ${cost!.currency} charged` } }
  }

  #charged(ctx: GuardContext): GuardOutcome {
    if (ctx.declaredCost !== undefined) ctx.charge = ctx.grant === undefined ? {} : { grantIndex: ctx.grant.index }
    return { pass: true }
  }
}

const EXHAUSTED: Record<InvocationCapture['kind'], string> = {
  grant: 'budget_exhausted',
  aggregate: 'aggregate_budget_exhausted',
  family: 'family_budget_exhausted',
  share: 'budget_share_exhausted',
}

function exhausted(guard: string, id: string, capture: InvocationCapture, used: number): GuardOutcome {
  const what = capture.kind === 'grant' ? 'the grant allows' : capture.kind === 'share' ? 'its budget share allows' : `its ${capture.kind === 'family' ? 'delegation family' : 'aggregate'} budget allows`
  return deny(guard, `capability ${id} has used all ${capture.max} invocations ${what} (${used} used)`, {
    details: { reason_code: EXHAUSTED[capture.kind], hint: 'request a new capability token' },
  })
}
