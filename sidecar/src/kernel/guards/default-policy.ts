// SessionAllow routes: a session-scoped allow recorded as a passing DefaultPolicyGuard (spec 02).
import type { Guard, GuardContext, GuardOutcome } from './guard.js'

export class DefaultPolicyGuard implements Guard {
  readonly name = 'DefaultPolicyGuard'

  check(ctx: GuardContext): GuardOutcome {
    const why =
      ctx.route.why === 'side_effects'
        ? 'x-gate-side-effects: false'
        : ctx.route.matched
          ? `safe method ${ctx.request.method}`
          : `unmatched route, safe method ${ctx.request.method}`
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `session-scoped allow (${why})` } }
  }
}
