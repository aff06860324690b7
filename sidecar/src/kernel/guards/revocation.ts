// Runs first, on every route: a presented capability that was revoked (itself or any ancestor in its
// delegation chain) is denied before evaluation (spec 01: "denied before evaluation").
import type { RevocationPort } from '../ports.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export const REVOKED_SUGGESTION = 'request a fresh capability token from the issuer'

export class RevocationGuard implements Guard {
  readonly name = 'RevocationGuard'
  constructor(private readonly revocations: RevocationPort) {}

  check(ctx: GuardContext): GuardOutcome {
    const ids: string[] = []
    if (ctx.capabilityId !== null) ids.push(ctx.capabilityId)
    for (const link of ctx.presentedToken?.delegation_chain ?? []) if (typeof link.capability_id === 'string') ids.push(link.capability_id)
    const stale = ids.length === 0 ? undefined : this.revocations.unavailable?.()
    if (stale !== undefined) {
      // fail closed: a revocation made where this process cannot see it must not be honoured
      return deny(this.name, `capability ${ids[0]} cannot be checked for revocation: ${stale}`, {
        details: { reason_code: 'revocation_state_stale', hint: 'retry once trust-control is reachable' },
      })
    }
    for (const id of ids) {
      if (this.revocations.isRevoked(id)) {
        return deny(this.name, `capability ${id} has been revoked`, {
          details: { reason_code: 'capability_revoked', hint: REVOKED_SUGGESTION },
        })
      }
    }
    return { pass: true }
  }
}
