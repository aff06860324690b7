// Agent sessions only (spec 02 SessionContext, filled by the edge and the kernel): a session that has
// made more tool calls than --max-session-calls allows (`request_count`, this call included), or a call
// presenting a capability delegated deeper than --max-delegation-depth (`delegation_depth`), is denied
// with a receipt. HTTP requests have no session and pass. It runs after the policy guards and the
// input check, and before approval, nonce and budget, so a call over a limit creates no approval and
// spends nothing.
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

/** The limits on one agent session (config/session-limit-flags.ts reads them); undefined: not enforced. */
export interface SessionLimits {
  maxCalls: number | undefined
  maxDelegationDepth: number | undefined
}

export class SessionLimitGuard implements Guard {
  readonly name = 'SessionLimitGuard'
  readonly #limits: SessionLimits

  constructor(limits: SessionLimits) {
    this.#limits = limits
  }

  /** Whether any limit is set (the pipeline skips the guard otherwise, so receipts name it only when on). */
  get enabled(): boolean {
    return this.#limits.maxCalls !== undefined || this.#limits.maxDelegationDepth !== undefined
  }

  check(ctx: GuardContext): GuardOutcome {
    const session = ctx.session
    if (session === undefined) return { pass: true }
    const { maxCalls, maxDelegationDepth } = this.#limits
    const calls = session.request_count ?? 0
    if (maxCalls !== undefined && calls > maxCalls) {
      return deny(this.name, `session ${session.session_id} reached its limit of ${maxCalls} tool calls (this is call ${calls})`, {
        status: 429,
        details: { reason_code: 'session_call_limit', hint: 'start a new session: its count starts from zero' },
      })
    }
    const depth = session.delegation_depth ?? 0
    if (maxDelegationDepth !== undefined && depth > maxDelegationDepth) {
      return deny(this.name, `the capability presented is delegated ${depth} times, more than the ${maxDelegationDepth} allowed`, {
        details: { reason_code: 'delegation_depth_exceeded', hint: 'present a capability closer to its issuer' },
      })
    }
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `session call ${calls}${maxCalls === undefined ? '' : ` of ${maxCalls}`}, delegation depth ${depth}` } }
  }
}
