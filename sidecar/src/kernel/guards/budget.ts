// Runs last, so a request denied by any other guard never spends anything. Checks the declared cost
// (governed_intent.max_amount) against the route's x-gate-budget-limit, then captures, atomically and
// committed before the answer, every counter the matched grant and the token advance (@gate/sdk
// planCaptures): the grant's max_invocations and max_total_cost, the token's aggregate invocation budget
// (its own, or its delegation family's shared counter) and its budget share, and the same limits of
// every delegation link above the token, which all the link's descendants spend together.
import { planCaptures, type CapabilityToken, type CapturePlan, type CostCapture, type InvocationCapture } from '@gate/sdk'
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
    const plan = planCaptures(token, matched, cost)
    if (plan.invocations.length === 0 && plan.costs.length === 0) return this.#charged(ctx)
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
        const capped = plan.costs[failed.index] as CostCapture
        const total = capped.link === undefined ? "the grant's total" : `the total of the grant of ${linkLabel(token, capped.link)}, charged by all its descendants together,`
        return deny(this.name, `capability ${token.id}: the declared cost ${capped.units} would bring ${total} to more than max_total_cost ${capped.maxUnits} (${failed.units} charged so far)`, {
          details: { reason_code: 'total_cost_exceeded', hint: hint(capped.link) },
        })
      }
      const capture = plan.invocations[failed.index] as InvocationCapture
      if (failed.kind === 'max_mismatch') {
        return deny(this.name, `capability ${token.id} names a delegation family budget of ${capture.max} invocations, but the family's counter was created with ${failed.recordedMax}`, {
          details: { reason_code: 'family_budget_mismatch' },
        })
      }
      return exhausted(this.name, token, capture, failed.used)
    }
    ctx.charge = { grantIndex: matched.index }
    const own = plan.costs.findIndex(c => c.link === undefined)
    if (own >= 0 && result.costUnits[own] !== undefined) {
      ctx.charge.budgetTotal = plan.costs[own]!.maxUnits
      ctx.charge.budgetRemaining = plan.costs[own]!.maxUnits - result.costUnits[own]!
    }
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: counted(plan, result.used, cost) } }
  }

  #charged(ctx: GuardContext): GuardOutcome {
    if (ctx.declaredCost !== undefined) ctx.charge = ctx.grant === undefined ? {} : { grantIndex: ctx.grant.index }
    return { pass: true }
  }
}

function counted(plan: CapturePlan, used: number[], cost: { units: number; currency: string } | undefined): string {
  const counts = plan.invocations.map((c, i) => `${c.link === undefined ? '' : `delegation_chain[${c.link}] `}${c.kind} ${used[i]} of ${c.max}`)
  return counts.length > 0 ? `invocation counted: ${counts.join(', ')}` : `cost ${cost!.units} ${cost!.currency} charged`
}

const EXHAUSTED: Record<InvocationCapture['kind'], string> = {
  grant: 'budget_exhausted',
  aggregate: 'aggregate_budget_exhausted',
  family: 'family_budget_exhausted',
  share: 'budget_share_exhausted',
}

function exhausted(guard: string, token: CapabilityToken, capture: InvocationCapture, used: number): GuardOutcome {
  const { kind, link, max } = capture
  const reason =
    link === undefined
      ? `capability ${token.id} has used all ${max} invocations ${kind === 'grant' ? 'the grant' : kind === 'share' ? 'its budget share' : `its ${kind === 'family' ? 'delegation family' : 'aggregate'} budget`} allows (${used} used)`
      : `capability ${token.id}: ${LINK_BUDGET[kind]} of ${linkLabel(token, link)} allows ${max} invocations to all its descendants together (${used} used)`
  return deny(guard, reason, { details: { reason_code: EXHAUSTED[kind], hint: hint(link) } })
}

const LINK_BUDGET: Record<InvocationCapture['kind'], string> = {
  grant: 'the grant',
  aggregate: 'the aggregate budget',
  family: 'the delegation family budget',
  share: 'the budget share',
}

function linkLabel(token: CapabilityToken, link: number): string {
  return `delegation_chain[${link}] (delegating capability ${token.delegation_chain?.[link]?.capability_id ?? '?'})`
}

function hint(link: number | undefined): string {
  return link === undefined ? 'request a new capability token' : 'the delegated budget is spent: ask the delegator for a new delegation'
}
