// The cost a request declares: `governed_intent.max_amount` (spec 03, governed transaction extensions),
// minor units and an ISO 4217 code. It is what route budget limits and grant cost ceilings are checked
// against and what the receipt records as charged (docs/capabilities.md, "Cost"). A malformed amount is
// a problem, never "no cost": reading it as absent would let a request slip past a cost ceiling.
import type { MonetaryAmount } from '@gate/sdk'

export type DeclaredCost = { cost: MonetaryAmount | undefined } | { problem: string }

const CURRENCY = /^[A-Z]{3}$/

export function readDeclaredCost(intent: Record<string, unknown> | undefined): DeclaredCost {
  if (intent === undefined || !('max_amount' in intent) || intent.max_amount === undefined) return { cost: undefined }
  const amount = intent.max_amount as { units?: unknown; currency?: unknown } | null
  if (typeof amount !== 'object' || amount === null || Array.isArray(amount)) return { problem: 'governed_intent.max_amount must be an object {units, currency}' }
  const { units, currency } = amount
  if (!Number.isSafeInteger(units) || (units as number) < 0) return { problem: 'governed_intent.max_amount.units must be a non-negative integer (minor units)' }
  if (typeof currency !== 'string' || !CURRENCY.test(currency)) return { problem: 'governed_intent.max_amount.currency must be three uppercase letters' }
  return { cost: { units: units as number, currency } }
}
