// spec 03, Capability token: no token authorizes more than its issuer granted, and no field is
// accepted and ignored. A delegated child wider than what its chain delegated is denied, and siblings
// under one link share its budget; a token field or grant field that constrains a request and that the
// sidecar cannot check makes it deny (docs/capabilities.md). Tokens are minted with the issuer key the sidecar trusts (--issuer-seed-file)
// or issued through its control routes.
import { createSigner, generateSecret, sha256Hex, signCapability, type CapabilityToken, type GateHttpRequest, type ToolGrant, type UnsignedCapability } from '@gate/sdk'
import { delegatedChild, siblingChildren, widenedDelegation } from '@gate/sdk/testing'
import { defineCheck, fail } from '../check.js'
import type { CheckContext } from '../context.js'
import { encodeToken, grantFor, mintToken } from '../capability-tokens.js'
import { describeVerdict, expectAllow, expectCapabilityDeny, expectDeny } from '../expect.js'
import { tokenTarget } from './capabilities.js'

/** A grant for a route no document has: what the widening tests delegate instead of the target. */
const ELSEWHERE: ToolGrant = Object.freeze({ server_id: 'http', tool_name: 'GET /gate-conformance/delegated-elsewhere' })

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000)
}

/** The target route, requested without a body (so every argument is visible to the sidecar). */
function bodyless(ctx: CheckContext, extra: Partial<GateHttpRequest> = {}): { what: string; request: () => GateHttpRequest; grant: ToolGrant } {
  const target = tokenTarget(ctx)
  return {
    what: `${target.method} ${target.pattern}`,
    request: () => target.request({ body_hash: null, body_length: 0, ...extra }),
    grant: grantFor(target),
  }
}

/** A token signed by the trusted issuer, granting `grants`, with `extra` members. */
function issued(ctx: CheckContext, grants: ToolGrant[], extra: Record<string, unknown> = {}): CapabilityToken {
  const { signature: _s, issuer: _i, ...body } = mintToken(ctx.trustedIssuer(), { grants })
  return signCapability({ ...body, ...extra } as UnsignedCapability, ctx.trustedIssuer())
}

export const CAPABILITY_FIELD_CHECKS = [
  defineCheck({
    id: 'capabilities.delegation-widening-denied',
    description: 'a child token its delegatee signed, granting more than its delegation link delegated (or a link that states no scope), is denied by CapabilityGuard',
    specRef: '03 Capability token (delegation_chain, scope_hash); Gate: docs/capabilities.md (attenuation)',
    required: true,
    needs: ['issuer-key'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const authority = ctx.trustedIssuer()
      const delegatee = createSigner({ secret: generateSecret() })
      const subject = ctx.untrustedSigner.publicKey
      const now = nowSeconds()
      const hashOnly = widenedDelegation({ authority, delegatee, subject, now, delegatedTool: ELSEWHERE.tool_name })
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(hashOnly) }), `${target.method} ${target.pattern} with a child granting *:* under a link binding only the hash of ${ELSEWHERE.tool_name}`)
      const stated = delegatedChild({
        signers: [authority, delegatee],
        delegated: [{ scope: { grants: [ELSEWHERE] }, expires_at: now + 600 }],
        child: { scope: { grants: [{ server_id: '*', tool_name: '*' }] }, expires_at: now + 300 },
        subject,
        now,
      })
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(stated) }), `${target.method} ${target.pattern} with a child granting *:* under a link delegating ${ELSEWHERE.tool_name}`)
      const outliving = delegatedChild({
        signers: [authority, delegatee],
        delegated: [{ scope: { grants: [grantFor(target)] }, expires_at: now + 60 }],
        child: { scope: { grants: [grantFor(target)] }, expires_at: now + 3600 },
        subject,
        now,
      })
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(outliving) }), `${target.method} ${target.pattern} with a child outliving its delegation`)
    },
  }),
  defineCheck({
    id: 'capabilities.delegation-attenuated-allowed',
    description: 'a child within what its delegation link states (scope, expiry) is allowed the route it holds',
    specRef: 'Gate: docs/capabilities.md (a child its delegatee signed)',
    required: false,
    needs: ['issuer-key'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const now = nowSeconds()
      const child = delegatedChild({
        signers: [ctx.trustedIssuer(), createSigner({ secret: generateSecret() })],
        delegated: [{ scope: { grants: [grantFor(target), ELSEWHERE] }, expires_at: now + 600 }],
        child: { scope: { grants: [grantFor(target)] }, expires_at: now + 300 },
        subject: ctx.untrustedSigner.publicKey,
        now,
      })
      expectAllow(await ctx.evaluate(target.request(), { capability: encodeToken(child) }), `${target.method} ${target.pattern} with an attenuated child`)
    },
  }),
  defineCheck({
    id: 'capabilities.delegated-budget-across-siblings',
    description: 'five children a delegatee signed under one link granting max_invocations 1, each max_invocations 1 with an id of its own, are allowed once in total: the first allowed, the other four denied',
    specRef: "03 Capability token (ToolGrant max_invocations, delegation_chain); Gate: docs/capabilities.md (Budgets: a link's limits bound all its descendants)",
    required: true,
    needs: ['issuer-key'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const now = nowSeconds()
      const grants = [{ ...grantFor(target), max_invocations: 1 }]
      const unique = sha256Hex(ctx.unique()).slice(0, 16)
      const siblings = siblingChildren({
        authority: ctx.trustedIssuer(),
        delegatee: createSigner({ secret: generateSecret() }),
        capabilityId: `cap_conformance_root_${unique}`,
        delegated: { scope: { grants }, expires_at: now + 600 },
        child: { scope: { grants }, expires_at: now + 300 },
        subject: ctx.untrustedSigner.publicKey,
        now,
        count: 5,
        id: n => `cap_conformance_sibling_${unique}_${n}`,
      })
      const what = (n: number) => `${target.method} ${target.pattern} with sibling ${n} of 5 under a link granting max_invocations 1`
      expectAllow(await ctx.evaluate(target.request(), { capability: encodeToken(siblings[0]!) }), what(1))
      for (const [i, sibling] of siblings.slice(1).entries()) {
        const e = await ctx.evaluate(target.request(), { capability: encodeToken(sibling) })
        if (e.answer.verdict.verdict === 'allow') fail(`${what(i + 2)}: allowed, though the link's one invocation was spent by sibling 1 (a link's budget bounds all its descendants together, not each child's id)`)
        expectDeny(e, what(i + 2))
      }
    },
  }),
  defineCheck({
    id: 'capabilities.token-fields-enforced',
    description: 'a trusted token is denied when a field constrains the request and the sidecar cannot check it: a zero delegation_family budget, an unknown caveat kind, attenuation steps, a zero budget share, a member the schema does not know',
    specRef: '03 Capability token (aggregate budget: a zero maximum denies every capture; caveats; scope_attenuations; budget_share_bps); Versioning (fail closed)',
    required: true,
    needs: ['issuer-key'],
    async run(ctx) {
      const { what, request, grant } = bodyless(ctx)
      expectAllow(await ctx.evaluate(request(), { capability: encodeToken(issued(ctx, [grant])) }), `${what} with a plain trusted token`)
      const variants: [string, Record<string, unknown>][] = [
        ['an aggregate_invocation_budget of scope delegation_family and maximum 0', { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 0 } }],
        ['an aggregate_invocation_budget of scope capability and maximum 0', { aggregate_invocation_budget: { scope: 'capability', max_invocations: 0 } }],
        ['a caveat of an unknown kind', { caveats: [{ kind: 'gate_conformance_unknown', predicate: 'x' }] }],
        ['scope_attenuations the sidecar cannot apply', { scope_attenuations: [{ gate_conformance_unknown_step: true }] }],
        ['budget_share_bps 0 of an aggregate budget', { aggregate_invocation_budget: { scope: 'capability', max_invocations: 10 }, budget_share_bps: 0 }],
        ['a top-level member gate.capability.v1 does not have', { gate_conformance_limit: 1 }],
      ]
      for (const [name, extra] of variants) {
        expectDeny(await ctx.evaluate(request(), { capability: encodeToken(issued(ctx, [grant], extra)) }), `${what} with a trusted token carrying ${name}`)
      }
    },
  }),
  defineCheck({
    id: 'capabilities.grant-fields-enforced',
    description: 'an issued token whose matching grant carries a refused constraint, an unsatisfied portable constraint, dpop_required, operations without invoke, or a cost cap with no declared cost is denied; a satisfied portable constraint allows',
    specRef: '03 Capability token (ToolGrant; the portable matcher decides 8 constraints from call arguments and refuses the other 19 by name)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const owner = (value: string) => bodyless(ctx, { query: { gate_conformance_owner: value } })
      const { what, grant } = owner('ann')
      const custom = { ...grant, constraints: [{ type: 'custom', value: ['gate_conformance_owner', 'ann'] }] } as ToolGrant
      const token = encodeToken(await ctx.issueToken([custom]))
      expectAllow(await ctx.evaluate(owner('ann').request(), { capability: token }), `${what}?gate_conformance_owner=ann with a grant constrained to owner ann`)
      expectDeny(await ctx.evaluate(owner('bob').request(), { capability: token }), `${what}?gate_conformance_owner=bob with a grant constrained to owner ann`)
      const denied: [string, Partial<ToolGrant>][] = [
        ['a regex_match constraint (refused by name)', { constraints: [{ type: 'regex_match', value: '.*' }] }],
        ['a constraint of an unknown type', { constraints: [{ type: 'gate_conformance_unknown', value: 1 }] }],
        ['dpop_required: true', { dpop_required: true }],
        ['operations without invoke', { operations: ['read_result'] }],
        ['max_cost_per_invocation, and no declared cost', { max_cost_per_invocation: { units: 1, currency: 'USD' } }],
      ]
      for (const [name, fields] of denied) {
        const e = await ctx.evaluate(owner('ann').request(), { capability: encodeToken(await ctx.issueToken([{ ...grant, ...fields }])) })
        if (e.answer.verdict.verdict !== 'deny') fail(`${what} with a grant carrying ${name}: expected deny, got ${describeVerdict(e)}`)
      }
    },
  }),
]
