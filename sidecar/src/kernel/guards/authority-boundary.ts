// Spec 02: `supplemental_authorization` carries authorization extensions the HTTP authority does not
// enforce; a request carrying one is denied at the authority boundary, never silently ignored.
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class AuthorityBoundaryGuard implements Guard {
  readonly name = 'AuthorityBoundaryGuard'

  check(ctx: GuardContext): GuardOutcome {
    if (ctx.request.supplemental_authorization === undefined) return { pass: true }
    return deny(this.name, 'supplemental_authorization is not enforced by the HTTP authority; the request is denied rather than evaluated without it', {
      details: { reason_code: 'supplemental_authorization_unsupported' },
    })
  }
}
