// Spec 02: `supplemental_authorization` carries authorization extensions the HTTP authority does not
// enforce; a request carrying one is denied at the authority boundary, never silently ignored. A tool
// call carrying an authorization object Gate does not enforce (a signed approval token, a threshold
// proposal) is denied the same way.
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class AuthorityBoundaryGuard implements Guard {
  readonly name = 'AuthorityBoundaryGuard'

  check(ctx: GuardContext): GuardOutcome {
    const member = ctx.subject.unenforcedAuthorization
    if (member === undefined) return { pass: true }
    return deny(this.name, `${member} is not enforced by this authority; the request is denied rather than evaluated without it`, {
      details: { reason_code: `${member}_unsupported` },
    })
  }
}
