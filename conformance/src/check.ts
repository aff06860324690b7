// What a conformance check is, and how it reports: a check passes by returning, fails by throwing
// CheckFailure (or anything else), and is skipped by throwing CheckSkipped with the reason.
import type { CheckContext } from './context.js'

export { CheckFailure, CheckSkipped, fail, skip } from './check-outcome.js'

/** The result of one check. */
export type CheckResultKind = 'PASS' | 'FAIL' | 'SKIP'

/** What a check needs besides the sidecar URL; a run without it skips the check with a reason. */
export type CheckNeed = 'control-token' | 'sdk-under-test' | 'strict-nonces' | 'issuer-key' | 'receipt-store' | 'proxy'

/** One behaviour observable from outside the sidecar. */
export interface CheckDefinition {
  /** Stable id, `area.behaviour`; never renamed once shipped. */
  readonly id: string
  /** One line: the behaviour and the expected answer. */
  readonly description: string
  /** The spec section (or Gate document) it enforces. */
  readonly specRef: string
  /** A failing required check makes the run fail (exit code 1); the others are advisory. */
  readonly required: boolean
  readonly needs?: readonly CheckNeed[]
}

export interface Check extends CheckDefinition {
  run(ctx: CheckContext): Promise<void>
}

/** Defines a check (identity function that keeps the literal type tidy). */
export function defineCheck(check: Check): Check {
  return Object.freeze(check)
}
