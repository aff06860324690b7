// Runs last, so a request denied by any other guard never spends an invocation: counts the matched
// grant's max_invocations and the token's aggregate_invocation_budget atomically in the budget store,
// and checks a declared cost against the route's x-gate-budget-limit.
import type { BudgetPort } from '../ports.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class BudgetGuard implements Guard {
  readonly name = 'BudgetGuard'
  constructor(private readonly budgets: BudgetPort) {}

  async check(ctx: GuardContext): Promise<GuardOutcome> {
    const limit = ctx.route.matched ? ctx.route.route.budgetLimit : undefined
    const declared = declaredCost(ctx.request.governed_intent)
    if (limit !== undefined && declared !== undefined && declared > limit) {
      return deny(this.name, `declared cost ${declared} exceeds the route's budget limit ${limit}`, { details: { reason_code: 'budget_limit_exceeded' } })
    }
    const token = ctx.verifiedToken
    if (token === undefined) return { pass: true }
    const aggregate = token.aggregate_invocation_budget
    if (aggregate !== undefined && aggregate.scope === 'capability') {
      const r = await this.budgets.tryConsume(token.id, 'aggregate', aggregate.max_invocations)
      if (!r.allowed) return exhausted(this.name, token.id, r.used, aggregate.max_invocations)
    }
    if (typeof ctx.grantMax === 'number' && ctx.grantKey !== undefined) {
      const r = await this.budgets.tryConsume(token.id, ctx.grantKey, ctx.grantMax)
      if (!r.allowed) return exhausted(this.name, token.id, r.used, ctx.grantMax)
      return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `invocation ${r.used} of ${ctx.grantMax}` } }
    }
    return { pass: true }
  }
}

function exhausted(guard: string, id: string, used: number, max: number): GuardOutcome {
  return deny(guard, `capability ${id} has used all ${max} invocations (${used} used)`, {
    details: { reason_code: 'budget_exhausted', hint: 'request a new capability token' },
  })
}

function declaredCost(intent: Record<string, unknown> | undefined): bigint | undefined {
  const amount = (intent?.max_amount as { units?: unknown } | undefined)?.units
  if (typeof amount === 'number' && Number.isSafeInteger(amount) && amount >= 0) return BigInt(amount)
  return undefined
}
