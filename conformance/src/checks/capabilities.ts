// spec 01, Authentication and the outcome table; spec 02, States (capability presentation) and
// docs/capabilities.md: which presented capabilities let a deny-by-default request through. Tokens are
// issued and revoked by the sidecar itself when a control token is given; without one, expired,
// wrong-scope and tampered tokens are minted locally with a key the sidecar does not trust, which must
// be denied just the same.
import { sha256Hex, type CapabilityToken, type GateHttpRequest } from '@gate/sdk'
import { defineCheck, fail } from '../check.js'
import type { CheckContext, EvaluateHeaders, Evaluation } from '../context.js'
import { encodeToken, grantFor, mintToken, WRONG_SCOPE_GRANT } from '../capability-tokens.js'
import { describeVerdict, expectAllow, expectCapabilityDeny, expectDeny } from '../expect.js'
import { buildRequest } from '../gate-request.js'
import { concretePath } from '../policy.js'

/** The control token as the bearer of an evaluate call: an authenticated caller (the SDK's sidecarToken). */
function controlBearer(ctx: CheckContext): EvaluateHeaders {
  ctx.control() // skips the check without a control token
  return { authorization: `Bearer ${ctx.controlToken}` }
}

/** The deny-by-default route tokens are presented to: an unsafe route without overrides, else the method rule. */
export function tokenTarget(ctx: CheckContext): { method: GateHttpRequest['method']; pattern: string; request(extra?: Partial<GateHttpRequest>): GateHttpRequest } {
  // a restricted route asks for an approval on every call (spec 01): not a route to present tokens to
  const plain = (r: (typeof ctx.policy.routes)[number]) => r.decision === 'DenyByDefault' && !r.approvalRequired && r.sensitivity !== 'restricted'
  const route = ctx.policy.routes.find(r => plain(r) && r.sideEffects === undefined) ?? ctx.policy.routes.find(plain)
  if (route !== undefined) {
    return { method: route.method, pattern: route.pattern, request: extra => ({ ...ctx.requestFor(route), ...extra }) }
  }
  const path = ctx.unmatched()
  return { method: 'POST', pattern: path, request: extra => ({ ...buildRequest({ method: 'POST', path, body: '{}' }), ...extra }) }
}

function expectReceiptCapability(e: Evaluation, token: CapabilityToken, what: string): void {
  if (e.answer.receipt.capability_id !== token.id) fail(`${what}: receipt capability_id is ${JSON.stringify(e.answer.receipt.capability_id ?? null)}, expected ${token.id}`)
}

function expectCapabilityEvidence(e: Evaluation, token: CapabilityToken, what: string): void {
  expectReceiptCapability(e, token, what)
  if (!(e.answer.evidence ?? []).some(g => g.guard_name === 'CapabilityGuard' && g.verdict === true)) {
    fail(`${what}: allow without a passing CapabilityGuard evidence entry (spec 02: CapabilityGuard records a capability decision)`)
  }
}

/**
 * Waits (bounded by `deadlineMs`) until the sidecar denies. Here time passing is the behaviour under
 * test, not a synchronisation: a token's window is in whole seconds of the sidecar's clock, so the
 * check waits for expires_at and then polls briefly.
 */
async function untilDenied(ctx: CheckContext, request: () => GateHttpRequest, headers: EvaluateHeaders, notBeforeMs: number, deadlineMs: number): Promise<Evaluation> {
  const wait = notBeforeMs - Date.now()
  if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait))
  for (;;) {
    const e = await ctx.evaluate(request(), headers)
    if (e.answer.verdict.verdict !== 'allow' || Date.now() > deadlineMs) return e
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

/**
 * The policy's approval-gated route, a token the sidecar issued for it, and the route evaluated with
 * that token alone (which leaves an approval pending).
 */
async function presentToApprovalRoute(ctx: CheckContext) {
  const route = ctx.route('route with x-gate-approval-required: true', r => r.approvalRequired)
  const capability = encodeToken(await ctx.issueToken([grantFor(route)]))
  const what = `${route.method} ${concretePath(route.pattern)} with a valid token and no approval`
  return { route, capability, what, pending: await ctx.evaluate(ctx.requestFor(route), { capability }) }
}

export const CAPABILITY_CHECKS = [
  defineCheck({
    id: 'capabilities.garbage-token-denied',
    description: 'an X-Gate-Capability header or gate_capability parameter that is not a token (text, {}, [], a bearer string) is denied by CapabilityGuard',
    specRef: '01 Authentication 1 (invalid token → deny from CapabilityGuard); 02 Verdict',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      for (const value of ['not-a-token', '{}', '{"id":"cap_x"}', Buffer.from('[]').toString('base64url'), 'Bearer abc.def', '%7B%7D']) {
        expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: value }), `${target.method} ${target.pattern} with X-Gate-Capability ${JSON.stringify(value)}`)
      }
      const viaQuery = target.request({ query: { gate_capability: 'not-a-token' } })
      expectCapabilityDeny(await ctx.evaluate(viaQuery), `${target.method} ${target.pattern}?gate_capability=not-a-token`)
    },
  }),
  defineCheck({
    id: 'capabilities.untrusted-issuer-denied',
    description: 'a well-formed, unexpired token granting the route but signed by a key the sidecar does not trust is denied by CapabilityGuard',
    specRef: '01 Authentication 1; docs/capabilities.md (issuer trusted)',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = mintToken(ctx.untrustedSigner, { grants: [grantFor(target), { server_id: '*', tool_name: '*' }] })
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(token) }), `${target.method} ${target.pattern} with a token from an untrusted issuer`)
    },
  }),
  defineCheck({
    id: 'capabilities.expired-denied',
    description: 'a token past its expires_at is denied by CapabilityGuard (issued with a 2 s lifetime and allowed first, with a control token; else minted locally)',
    specRef: '01 Authentication 1 (token fails validation); docs/capabilities.md (window)',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      if (ctx.controlToken === null) {
        const now = Math.floor(Date.now() / 1000)
        const token = mintToken(ctx.untrustedSigner, { grants: [grantFor(target)], issuedAt: now - 7200, expiresAt: now - 3600 })
        expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(token) }), `${target.method} ${target.pattern} with an expired (locally minted) token`)
        return
      }
      const token = await ctx.issueToken([grantFor(target)], 2)
      const headers = { capability: encodeToken(token) }
      expectAllow(await ctx.evaluate(target.request(), headers), `${target.method} ${target.pattern} with a fresh token (before it expires)`)
      const e = await untilDenied(ctx, () => target.request(), headers, token.expires_at * 1000 + 50, token.expires_at * 1000 + 3000)
      expectCapabilityDeny(e, `${target.method} ${target.pattern} with a token that expired at ${token.expires_at}`)
    },
  }),
  defineCheck({
    id: 'capabilities.wrong-scope-denied',
    description: 'a trusted token whose grants cover another route, another method or another server is denied by CapabilityGuard',
    specRef: '01 Authentication 1; docs/capabilities.md (HTTP grant convention)',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      const other = target.method === 'GET' ? 'POST' : 'GET'
      const grants = [WRONG_SCOPE_GRANT, { server_id: 'http', tool_name: `${other} ${target.pattern}` }, { server_id: 'mcp', tool_name: `${target.method} ${target.pattern}` }]
      for (const grant of grants) {
        const token = ctx.controlToken === null ? mintToken(ctx.untrustedSigner, { grants: [grant] }) : await ctx.issueToken([grant])
        expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(token) }), `${target.method} ${target.pattern} with a token granting ${grant.server_id}:${grant.tool_name}`)
      }
    },
  }),
  defineCheck({
    id: 'capabilities.tampered-token-denied',
    description: 'a trusted token whose scope was widened after signing (signature no longer covers it) is denied by CapabilityGuard',
    specRef: '01 Authentication 1; docs/capabilities.md (issuer signature)',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = ctx.controlToken === null ? mintToken(ctx.untrustedSigner, { grants: [WRONG_SCOPE_GRANT] }) : await ctx.issueToken([WRONG_SCOPE_GRANT])
      const widened: CapabilityToken = { ...token, scope: { grants: [grantFor(target), { server_id: '*', tool_name: '*' }] } }
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(widened) }), `${target.method} ${target.pattern} with a token whose scope was widened after signing`)
      const later: CapabilityToken = { ...token, scope: { grants: [grantFor(target)] }, expires_at: token.expires_at + 86400 }
      expectCapabilityDeny(await ctx.evaluate(target.request(), { capability: encodeToken(later) }), `${target.method} ${target.pattern} with a token whose scope and expiry were changed after signing`)
    },
  }),
  defineCheck({
    id: 'capabilities.unknown-capability-id-denied',
    description: 'capability_id naming a token the sidecar does not know, with no token presented, is denied by CapabilityGuard',
    specRef: '02 States (capability_id in the request); 01 Authentication 1',
    required: true,
    async run(ctx) {
      const target = tokenTarget(ctx)
      const id = `cap_conformance_unknown_${sha256Hex(ctx.unique()).slice(0, 16)}`
      expectCapabilityDeny(await ctx.evaluate(target.request({ capability_id: id })), `${target.method} ${target.pattern} with capability_id ${id}`)
      // from a caller the sidecar looks ids up for, too
      if (ctx.controlToken !== null) expectCapabilityDeny(await ctx.evaluate(target.request({ capability_id: id }), controlBearer(ctx)), `${target.method} ${target.pattern} with capability_id ${id} and the control token`)
    },
  }),
  defineCheck({
    id: 'capabilities.valid-token-allows',
    description: 'a token the sidecar issued for the route, in X-Gate-Capability as base64url JSON, allows: passing CapabilityGuard evidence, receipt capability_id = token id',
    specRef: '01 States (DenyByDefault, valid token → allow); 02 GuardEvidence; docs/capabilities.md',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([grantFor(target)])
      const e = await ctx.evaluate(target.request(), { capability: encodeToken(token) })
      const what = `${target.method} ${target.pattern} with an issued token`
      expectAllow(e, what)
      expectCapabilityEvidence(e, token, what)
    },
  }),
  defineCheck({
    id: 'capabilities.valid-token-json-form',
    description: 'an issued token sent in X-Gate-Capability as plain JSON (not base64url) allows as well',
    specRef: 'Gate: docs/capabilities.md (token JSON or base64url of it)',
    required: false,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([grantFor(target)])
      expectAllow(await ctx.evaluate(target.request(), { capability: JSON.stringify(token) }), `${target.method} ${target.pattern} with the token as JSON`)
    },
  }),
  defineCheck({
    id: 'capabilities.query-parameter',
    description: 'an issued token presented in the gate_capability query parameter (no header) allows',
    specRef: '01 Authentication 1 (gate_capability query parameter); 02 States',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([grantFor(target)])
      const e = await ctx.evaluate(target.request({ query: { gate_capability: encodeToken(token) } }))
      const what = `${target.method} ${target.pattern}?gate_capability=<token>`
      expectAllow(e, what)
      expectCapabilityEvidence(e, token, what)
    },
  }),
  defineCheck({
    id: 'capabilities.header-wins',
    description: 'with both a header and a gate_capability parameter the header decides: valid header + garbage parameter allows, garbage header + valid parameter denies',
    specRef: '01 Authentication 1 ("the header wins when both are present")',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const good = encodeToken(await ctx.issueToken([grantFor(target)]))
      expectAllow(await ctx.evaluate(target.request({ query: { gate_capability: 'not-a-token' } }), { capability: good }), `${target.method} ${target.pattern}: valid header, garbage parameter`)
      expectCapabilityDeny(await ctx.evaluate(target.request({ query: { gate_capability: good } }), { capability: 'not-a-token' }), `${target.method} ${target.pattern}: garbage header, valid parameter`)
    },
  }),
  defineCheck({
    id: 'capabilities.capability-id-field',
    description: 'capability_id in the GateHttpRequest naming a token the sidecar issued (no header), from a caller presenting the control token, allows and is recorded in the receipt',
    specRef: '02 States ("capability_id in the request"); docs/capabilities.md; docs/security.md (capability_id lookups)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([grantFor(target)])
      const e = await ctx.evaluate(target.request({ capability_id: token.id }), controlBearer(ctx))
      const what = `${target.method} ${target.pattern} with capability_id ${token.id}`
      expectAllow(e, what)
      expectCapabilityEvidence(e, token, what)
    },
  }),
  defineCheck({
    id: 'capabilities.capability-id-needs-control-token',
    description: "capability_id naming an issued token, from a caller without the control token, counts as no token: denied by CapabilityGuard, the receipt's capability_id null, and the holder's max_invocations untouched",
    specRef: 'Gate: docs/security.md (capability_id lookups only for authenticated callers; issue 24)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([{ ...grantFor(target), max_invocations: 1 }])
      for (const attempt of [1, 2]) {
        const what = `${target.method} ${target.pattern} with only capability_id ${token.id}, no control token (attempt ${attempt})`
        const e = await ctx.evaluate(target.request({ capability_id: token.id }))
        expectCapabilityDeny(e, what)
        if ((e.answer.receipt.capability_id ?? null) !== null) fail(`${what}: the receipt is filed under capability_id ${String(e.answer.receipt.capability_id)}`)
      }
      const holder = await ctx.evaluate(target.request(), { capability: encodeToken(token) })
      expectAllow(holder, `${target.method} ${target.pattern} by the holder afterwards (its one invocation must be left)`)
    },
  }),
  defineCheck({
    id: 'capabilities.revoked-denied',
    description: 'a token allowed before POST /v1/revocations is denied after it (header, gate_capability or capability_id) with a reason saying it was revoked (answer still 200)',
    specRef: '01 States (presented capability is revoked → denied before evaluation); 02 Endpoints (200 for revoked capability)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([grantFor(target)])
      const headers = { capability: encodeToken(token) }
      expectAllow(await ctx.evaluate(target.request(), headers), `${target.method} ${target.pattern} before revocation`)
      await ctx.control().revoke(token.id)
      const presentations: [string, GateHttpRequest, EvaluateHeaders][] = [
        ['in X-Gate-Capability', target.request(), headers],
        ['in gate_capability', target.request({ query: { gate_capability: encodeToken(token) } }), {}],
        ['by capability_id', target.request({ capability_id: token.id }), controlBearer(ctx)],
      ]
      for (const [how, request, h] of presentations) {
        const e = await ctx.evaluate(request, h)
        const what = `${target.method} ${target.pattern} with ${token.id} ${how} after revoking it`
        expectDeny(e, what)
        if (!/revoked/i.test((e.answer.verdict as { reason?: string }).reason ?? '')) fail(`${what}: deny reason does not say the token was revoked: ${describeVerdict(e)}`)
      }
    },
  }),
  defineCheck({
    id: 'capabilities.max-invocations-enforced',
    description: 'a grant with max_invocations 2 allows exactly two requests; the third is denied (answer still 200), its receipt naming the capability',
    specRef: '03 Capability tokens (ToolGrant max_invocations); docs/capabilities.md (Budgets)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const token = await ctx.issueToken([{ ...grantFor(target), max_invocations: 2 }])
      const headers = { capability: encodeToken(token) }
      for (const n of [1, 2]) {
        const what = `${target.method} ${target.pattern}, use ${n} of a grant with max_invocations 2`
        const e = await ctx.evaluate(target.request(), headers)
        expectAllow(e, what)
        expectCapabilityEvidence(e, token, what)
      }
      const what = `${target.method} ${target.pattern}, use 3 of a grant with max_invocations 2`
      const e = await ctx.evaluate(target.request(), headers)
      expectDeny(e, what)
      expectReceiptCapability(e, token, what)
    },
  }),
  defineCheck({
    id: 'capabilities.revoked-denied-any-route',
    description: 'a revoked token is denied on a session-allow route too (revocation is checked before the route policy)',
    specRef: '01 States ("any route | presented capability is revoked | denied before evaluation")',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const target = tokenTarget(ctx)
      const safe = ctx.policy.routes.find(r => r.decision === 'SessionAllow' && r.method === 'GET')
      const request = () => (safe !== undefined ? ctx.requestFor(safe) : buildRequest({ method: 'GET', path: ctx.unmatched() }))
      const token = await ctx.issueToken([grantFor(target)])
      const headers = { capability: encodeToken(token) }
      const where = safe === undefined ? 'an unmatched GET' : `GET ${concretePath(safe.pattern)}`
      expectAllow(await ctx.evaluate(request(), headers), `${where} with the token before revocation`)
      await ctx.control().revoke(token.id)
      expectDeny(await ctx.evaluate(request(), headers), `${where} with the token after revoking ${token.id}`)
    },
  }),
  defineCheck({
    id: 'capabilities.approval-not-allowed',
    description: 'an x-gate-approval-required route is not allowed by a valid capability alone (the approval is still pending)',
    specRef: '01 States (approval-gated route → pending approval, not forwarded)',
    required: true,
    needs: ['control-token'],
    async run(ctx) {
      const { pending, what } = await presentToApprovalRoute(ctx)
      expectDeny(pending, what)
    },
  }),
  defineCheck({
    id: 'capabilities.approval-pending-409',
    description: 'that approval deny comes from ApprovalGuard with http_status 409, reason_code approval_required and an approval handle',
    specRef: 'Gate: docs/approvals.md (pending approval)',
    required: false,
    needs: ['control-token'],
    async run(ctx) {
      const { pending: e, what } = await presentToApprovalRoute(ctx)
      const v = e.answer.verdict as { verdict: string; guard?: string; http_status?: number; details?: { reason_code?: string } }
      if (v.verdict !== 'deny' || v.guard !== 'ApprovalGuard' || v.http_status !== 409 || v.details?.reason_code !== 'approval_required') {
        fail(`${what}: expected deny by ApprovalGuard, 409, approval_required; got ${describeVerdict(e)}`)
      }
      const a = e.answer.approval
      if (a === undefined || typeof a.approval_id !== 'string' || a.resume_path !== `/approvals/${a.approval_id}/respond`) fail(`${what}: no approval handle {approval_id, resume_path} in the answer`)
    },
  }),
  defineCheck({
    id: 'capabilities.approval-approved-once',
    description: 'after POST /approvals/{id}/respond approves it, the same request retried with X-Gate-Approval-Id is allowed once; a second retry is denied',
    specRef: 'Gate: docs/approvals.md (approved approval consumed atomically, allowed exactly once)',
    required: false,
    needs: ['control-token'],
    async run(ctx) {
      const { route, capability, what, pending } = await presentToApprovalRoute(ctx)
      const where = `${route.method} ${concretePath(route.pattern)}`
      expectDeny(pending, what)
      const approvalId = pending.answer.approval?.approval_id
      if (approvalId === undefined) fail(`${where}: the pending deny carries no approval handle`)
      await ctx.control().respondToApproval(approvalId, 'approve')
      // the same caller, route and body again (a new request id), now naming the approval
      const first = await ctx.evaluate(ctx.requestFor(route), { capability, approvalId })
      expectAllow(first, `${where} retried with approved approval ${approvalId}`)
      const second = await ctx.evaluate(ctx.requestFor(route), { capability, approvalId })
      expectDeny(second, `${where} retried a second time with approval ${approvalId}`)
    },
  }),
  defineCheck({
    id: 'capabilities.control-requires-token',
    description: 'the control routes (POST /v1/capabilities/issue, /v1/revocations, /approvals/{id}/respond) refuse a caller without the control token, or with a wrong one, with 401 or 403, even from loopback and claiming X-Forwarded-For 127.0.0.1',
    specRef: '01 Authentication 3 (helper routes sit behind a sidecar-control token); docs/security.md',
    required: true,
    async run(ctx) {
      const wrong = `${ctx.controlToken ?? 'gate-conformance-guess'}x`
      const routes: [string, unknown][] = [
        ['/v1/capabilities/issue', { subjectPublicKey: ctx.untrustedSigner.publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, ttlSeconds: 31_536_000 }],
        ['/v1/revocations', { capabilityId: `cap_conformance_${ctx.unique()}` }],
        [`/approvals/conformance-${ctx.unique()}/respond`, { decision: 'approve' }],
      ]
      const variants: [string, Record<string, string>][] = [
        ['no Authorization header', {}],
        ['no Authorization header, X-Forwarded-For 127.0.0.1', { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' }],
        ['a wrong bearer token', { authorization: `Bearer ${wrong}` }],
        ['the token without "Bearer"', { authorization: ctx.controlToken ?? wrong }],
      ]
      for (const [path, body] of routes) {
        for (const [what, headers] of variants) {
          const res = await ctx.http.send({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
          if (res.status !== 401 && res.status !== 403) fail(`POST ${path} with ${what}: expected 401 or 403, got ${res.status} ${res.text.slice(0, 200)}`)
        }
      }
    },
  }),
]
