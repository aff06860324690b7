// DenyByDefault routes and tools need a capability: present; valid against gate.capability.v1;
// verified against the trusted issuers (the sidecar's own authority key plus configured issuer keys),
// its chain proving any attenuation; naming the same id as the request's capability_id; and, used for
// this request as a call (an HTTP request through kernel/grants.ts, or the agent's tool call), letting
// it through in every field that constrains it (@gate/sdk authorizeCall: caveats, grants, operations,
// constraints, DPoP, cost ceilings, and each delegation link stating a scope covering the call, whose
// grant the budget guard then captures for all the link's descendants).
import { authorizeCall, VerifiedSignatureCache, verifyCapability, type CapabilityToken } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { grantScope } from '../grants.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class CapabilityGuard implements Guard {
  readonly name = 'CapabilityGuard'
  // A token is presented on every request; its issuer signature is verified once (delegation links too).
  readonly #verified = new VerifiedSignatureCache()
  constructor(private readonly trustedIssuers: () => Iterable<string>) {}

  check(ctx: GuardContext): GuardOutcome {
    const { subject } = ctx
    const scope = subject.requiredScope
    const hint = subject.capabilityHint
    const token = ctx.presentedToken
    if (token === undefined) {
      if (ctx.presentedTokenProblem !== undefined) {
        return deny(this.name, `invalid capability: ${ctx.presentedTokenProblem}`, {
          details: { reason_code: 'capability_invalid', required_scope: scope, hint },
        })
      }
      return deny(this.name, `capability required: ${subject.label} is deny-by-default`, {
        details: { reason_code: 'capability_required', required_scope: scope, granted_scope: null, hint },
      })
    }
    // A member the schema does not know could be a restriction: refused, never dropped.
    const shape = validate('gate.capability.v1', token)
    if (!shape.ok) {
      return deny(this.name, `invalid capability: not a gate.capability.v1 token: ${shape.errors.slice(0, 3).join('; ')}`, {
        details: { reason_code: 'capability_malformed', required_scope: scope, hint },
      })
    }
    const verified = verifyCapability(token, { trustedIssuers: this.trustedIssuers(), now: ctx.now, cache: this.#verified })
    if (!verified.ok) {
      return deny(this.name, `invalid capability: ${verified.reason}`, {
        details: { reason_code: `capability_${verified.code}`, required_scope: scope, hint },
      })
    }
    const requestedId = subject.requestedCapabilityId
    if (requestedId !== undefined && requestedId !== null && requestedId !== token.id) {
      return deny(this.name, `capability_id ${requestedId} does not match the presented token ${token.id}`, {
        details: { reason_code: 'capability_id_mismatch', required_scope: scope },
      })
    }
    const authorized = authorizeCall(token, subject.toolCall())
    if (!authorized.ok) {
      return deny(this.name, `capability ${token.id} does not cover this request: ${authorized.reason}`, {
        details: { reason_code: authorized.code, required_scope: scope, granted_scope: describeGrants(token) },
      })
    }
    ctx.verifiedToken = token
    ctx.grant = { index: authorized.index, grant: authorized.grant, links: authorized.links }
    return {
      pass: true,
      evidence: { guard_name: this.name, verdict: true, details: `capability ${token.id} grants ${grantScope(authorized.grant)}` },
    }
  }
}

function describeGrants(token: CapabilityToken): string | null {
  const scopes = (token.scope.grants ?? []).map(grantScope)
  return scopes.length === 0 ? null : scopes.join(', ')
}
