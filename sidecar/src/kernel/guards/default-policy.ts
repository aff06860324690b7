// SessionAllow routes and tools: a session-scoped allow recorded as a passing DefaultPolicyGuard (spec 02).
import type { Guard, GuardContext, GuardOutcome } from './guard.js'

export class DefaultPolicyGuard implements Guard {
  readonly name = 'DefaultPolicyGuard'

  check(ctx: GuardContext): GuardOutcome {
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `session-scoped allow (${ctx.subject.sessionAllowReason})` } }
  }
}
