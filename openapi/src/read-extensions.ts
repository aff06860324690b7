// Reads the five `x-gate-*` keys from a raw operation object (spec 01, "Extension keys"). Every key is
// optional and a value of the wrong JSON type is treated as absent, so a typo never fails a document.
// One exception, for the budget: a number too large to be exact as a JS number and whose literal was
// not captured exactly is refused, because silently rounding a cost cap (or dropping it) fails open.
import { OpenApiError } from './errors.js'
import type { GateExtensions, Sensitivity } from './types.js'

export const SENSITIVITY_KEY = 'x-gate-sensitivity'
export const SIDE_EFFECTS_KEY = 'x-gate-side-effects'
export const APPROVAL_REQUIRED_KEY = 'x-gate-approval-required'
export const BUDGET_LIMIT_KEY = 'x-gate-budget-limit'
export const PUBLISH_KEY = 'x-gate-publish'

const SENSITIVITIES: ReadonlySet<string> = new Set<Sensitivity>(['public', 'internal', 'sensitive', 'restricted'])
export const MAX_BUDGET_LIMIT = (1n << 64n) - 1n

/**
 * The `x-gate-*` values of one operation. `exactBudgets` carries budget literals the parser kept
 * exact; `location` names the operation in errors.
 */
export function readExtensions(
  operation: Record<string, unknown>,
  exactBudgets: WeakMap<object, bigint | null>,
  location: string,
): GateExtensions {
  const sensitivity = operation[SENSITIVITY_KEY]
  const sideEffects = operation[SIDE_EFFECTS_KEY]
  const approval = operation[APPROVAL_REQUIRED_KEY]
  const publish = operation[PUBLISH_KEY]
  return {
    // spec 01: enum values are lowercase; "Public" is an unrecognized value, hence absent.
    sensitivity: typeof sensitivity === 'string' && SENSITIVITIES.has(sensitivity) ? (sensitivity as Sensitivity) : 'internal',
    sideEffects: typeof sideEffects === 'boolean' ? sideEffects : undefined,
    approvalRequired: approval === true,
    budgetLimit: readBudgetLimit(operation, exactBudgets, location),
    publish: publish !== false,
  }
}

function readBudgetLimit(
  operation: Record<string, unknown>,
  exactBudgets: WeakMap<object, bigint | null>,
  location: string,
): bigint | undefined {
  if (!Object.hasOwn(operation, BUDGET_LIMIT_KEY)) return undefined
  const exact = exactBudgets.get(operation)
  if (exact !== undefined) return exact !== null && exact >= 0n && exact <= MAX_BUDGET_LIMIT ? exact : undefined
  const value = operation[BUDGET_LIMIT_KEY]
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return undefined
  if (Number.isSafeInteger(value)) return BigInt(value)
  // Above 2^53 a number may already be rounded; past 2^64 it is out of range either way.
  if (value > Number(MAX_BUDGET_LIMIT)) return undefined
  throw new OpenApiError(
    'InvalidSpec',
    `${location}.${BUDGET_LIMIT_KEY}`,
    'value above 2^53 cannot be read exactly from this form; write it as a plain integer literal',
  )
}
