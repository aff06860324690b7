// The cost a request declared, as its receipt records it (docs/capabilities.md, "Cost"): the reserved
// core-receipt metadata key `financial` (spec 03) and the receipt store's cost columns, which
// trust-control's minCost / maxCost / costCurrency filters and analytics read.
import type { Verdict } from '@gate/sdk'
import type { GuardContext } from './guards/guard.js'
import type { ReceiptWriteContext } from '../stores/receipt-writer.js'

/**
 * The financial metadata (spec 03 reserved receipt metadata key `financial`) and store columns of a
 * request that declared a cost: charged when allowed, attempted when a budget rule refused it.
 */
export function financialRecord(ctx: GuardContext, verdict: Verdict): { metadata: Record<string, unknown>; columns: Pick<ReceiptWriteContext, 'costUnits' | 'costCurrency' | 'attemptedCostUnits'> } | undefined {
  const cost = ctx.declaredCost
  if (cost === undefined) return undefined
  if (verdict.verdict === 'allow' && ctx.charge !== undefined) {
    const metadata: Record<string, unknown> = { cost_charged: cost.units, currency: cost.currency }
    if (ctx.charge.grantIndex !== undefined) metadata.grant_index = ctx.charge.grantIndex
    if (ctx.charge.budgetTotal !== undefined) metadata.budget_total = ctx.charge.budgetTotal
    if (ctx.charge.budgetRemaining !== undefined) metadata.budget_remaining = ctx.charge.budgetRemaining
    return { metadata, columns: { costUnits: cost.units, costCurrency: cost.currency, attemptedCostUnits: null } }
  }
  if (ctx.costRefused === true) {
    return {
      metadata: { cost_charged: 0, attempted_cost: cost.units, currency: cost.currency },
      columns: { costUnits: 0, costCurrency: cost.currency, attemptedCostUnits: cost.units },
    }
  }
  return undefined
}
