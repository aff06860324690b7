// DenyByDefault routes need a capability: present, verified against the trusted issuers (the sidecar's
// own authority key plus configured issuer keys), naming the same id as the request's capability_id,
// and carrying a grant that covers this method and route (kernel/grants.ts).
import { VerifiedSignatureCache, verifyCapability, type CapabilityToken } from '@gate/sdk'
import { findGrant, grantScope, requiredScope } from '../grants.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export const CAPABILITY_SUGGESTION =
  'present a valid capability token in the X-Gate-Capability header or the gate_capability query parameter'

export class CapabilityGuard implements Guard {
  readonly name = 'CapabilityGuard'
  // A token is presented on every request; its issuer signature is verified once (delegation links too).
  readonly #verified = new VerifiedSignatureCache()
  constructor(private readonly trustedIssuers: () => Iterable<string>) {}

  check(ctx: GuardContext): GuardOutcome {
    const target = { method: ctx.request.method, routePattern: ctx.routePattern, operationId: ctx.operationId }
    const scope = requiredScope(target)
    const token = ctx.presentedToken
    if (token === undefined) {
      if (ctx.presentedTokenProblem !== undefined) {
        return deny(this.name, `invalid capability: ${ctx.presentedTokenProblem}`, {
          details: { reason_code: 'capability_invalid', required_scope: scope, hint: CAPABILITY_SUGGESTION },
        })
      }
      return deny(this.name, `capability required: ${ctx.request.method} ${ctx.routePattern} is deny-by-default`, {
        details: { reason_code: 'capability_required', required_scope: scope, granted_scope: null, hint: CAPABILITY_SUGGESTION },
      })
    }
    const verified = verifyCapability(token, { trustedIssuers: this.trustedIssuers(), now: ctx.now, cache: this.#verified })
    if (!verified.ok) {
      return deny(this.name, `invalid capability: ${verified.reason}`, {
        details: { reason_code: `capability_${verified.code}`, required_scope: scope, hint: CAPABILITY_SUGGESTION },
      })
    }
    const requestedId = ctx.request.capability_id
    if (requestedId !== undefined && requestedId !== null && requestedId !== token.id) {
      return deny(this.name, `capability_id ${requestedId} does not match the presented token ${token.id}`, {
        details: { reason_code: 'capability_id_mismatch', required_scope: scope },
      })
    }
    const match = findGrant(token.scope.grants, target)
    if ('reason' in match) {
      return deny(this.name, `capability ${token.id} does not cover this request: ${match.reason}`, {
        details: { reason_code: 'scope_mismatch', required_scope: scope, granted_scope: describeGrants(token) },
      })
    }
    ctx.verifiedToken = token
    ctx.grantKey = `${match.index}:${match.grant.tool_name}`
    ctx.grantMax = match.grant.max_invocations ?? null
    return {
      pass: true,
      evidence: { guard_name: this.name, verdict: true, details: `capability ${token.id} grants ${grantScope(match.grant)}` },
    }
  }
}

function describeGrants(token: CapabilityToken): string | null {
  const scopes = token.scope.grants.map(grantScope)
  return scopes.length === 0 ? null : scopes.join(', ')
}
