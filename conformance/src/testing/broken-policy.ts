// The broken sidecar's decisions (test support, beside broken-sidecar.ts): route match, the method
// rule, capability presentation, revocation, nonces, budgets and approvals, each with the switches of
// the faults aimed at them. Token checks themselves are in broken-capabilities.ts.
import {
  canonicalJson,
  sha256Hex,
  utf8,
  uuidv7,
  verifyCapability,
  verifySignature,
  type CapabilityToken,
  type CapturePlan,
  type GateHttpRequest,
  type GuardEvidence,
  type HttpMethod,
  type SignedExecutionNonce,
  type ToolGrant,
  type Verdict,
} from '@gate/sdk'
import { classify, patternMatches, type PolicyRoute } from '../policy.js'
import { decideToken, httpCall, type TokenUse } from './broken-capabilities.js'
import type { BrokenReceipts } from './broken-receipts.js'
import type { BrokenState } from './broken-state.js'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

interface RouteMatch {
  matched: boolean
  pattern: string
  route: PolicyRoute | undefined
}

interface Decision {
  verdict: Verdict
  evidence: GuardEvidence[]
  capabilityId: string | null
  pattern: string
  approval?: { approval_id: string; resume_path: string }
  executionNonce?: SignedExecutionNonce
}

export function createBrokenPolicy(state: BrokenState, receipts: Pick<BrokenReceipts, 'callerHash' | 'requestContentHash'>) {
  const { has, routes, signer, issued, revoked, counters, trustedIssuers, approvals, strictNonces, nonceTtlSeconds, startedAt, nonces } = state
  const { callerHash, requestContentHash } = receipts

  // The path as sent, then every reading an upstream may apply (Gate: docs/security.md): the strictest
  // route any of them reaches decides; an unmatched request keeps its path as sent.
  function matchRoute(method: string, path: string): RouteMatch {
    let best = matchAsSent(method, path)
    if (has('path-as-sent-only')) return best
    for (const reading of readingsOf(path, !has('format-suffix-ignored'))) {
      const m = matchAsSent(method, reading)
      if (m.matched && strictnessOf(method, m) > strictnessOf(method, best)) best = m
    }
    return best
  }

  function strictnessOf(method: string, m: RouteMatch): number {
    return m.route?.approvalRequired === true ? 2 : decisionOf(method, m) === 'DenyByDefault' ? 1 : 0
  }

  function matchAsSent(method: string, path: string): RouteMatch {
    // letter case ignored, as Gate does by default (docs/security.md)
    const matches = (pattern: string) => patternMatches(pattern, path) || (!has('case-sensitive-method-rule') && patternMatches(pattern.toLowerCase(), path.toLowerCase()))
    const of = (m: string) => routes.filter(r => r.method === m && (matches(r.pattern) || (has('param-matches-rest') && matchesRest(r.pattern, path))))
    let candidates = of(method)
    // HEAD is decided as GET of the same route (servers answer it with the GET handler)
    if (candidates.length === 0 && method === 'HEAD' && !has('head-method-rule')) candidates = of('GET')
    candidates.sort((a, b) => paramCount(a.pattern) - paramCount(b.pattern))
    const route = candidates[0]
    if (route === undefined) return { matched: false, pattern: has('unmatched-pattern-wildcard') ? '*' : path, route: undefined }
    return { matched: true, pattern: route.pattern, route }
  }

  function decisionOf(method: string, m: RouteMatch): 'SessionAllow' | 'DenyByDefault' {
    if (has('deny-head-options') && (method === 'HEAD' || method === 'OPTIONS')) return 'DenyByDefault'
    if (!m.matched || m.route === undefined) {
      if (has('allow-unmatched')) return 'SessionAllow'
      return SAFE.has(method) ? 'SessionAllow' : 'DenyByDefault'
    }
    if (has('deny-safe-get') && method === 'GET') return 'DenyByDefault'
    const r = m.route
    const sideEffects = has('ignore-side-effects') ? undefined : r.sideEffects
    if (has('ignore-approval-precedence') && sideEffects !== undefined) return sideEffects ? 'DenyByDefault' : 'SessionAllow'
    return classify(r.method, r.approvalRequired, sideEffects)
  }

  function decide(request: GateHttpRequest, header: string | undefined, approvalHeader: string | undefined, nonceHeader: string | undefined, authenticated: boolean): Decision {
    const method = String(request.method)
    const m = matchRoute(method, String(request.path))
    const pattern = has('trust-client-route-pattern') ? request.route_pattern : m.pattern
    const deny = (guard: string, reason: string, evidence: GuardEvidence[], capabilityId: string | null, httpStatus = 403): Decision => ({
      verdict: has('empty-deny-details')
        ? { verdict: 'deny', reason, guard, http_status: httpStatus, details: { reason_code: null, hint: null } }
        : { verdict: 'deny', reason, guard, http_status: httpStatus },
      evidence: [...evidence, { guard_name: guard, verdict: false, details: reason }],
      capabilityId,
      pattern,
    })
    if (request.supplemental_authorization !== undefined && !has('ignore-supplemental')) {
      return deny('AuthorityBoundaryGuard', 'supplemental_authorization is not enforced by the HTTP authority', [], null)
    }
    // presentation: header, then gate_capability, then capability_id
    const queryToken = has('ignore-query-token') ? undefined : request.query?.gate_capability
    const tokenText = has('query-token-wins') ? (queryToken ?? header) : (header ?? queryToken)
    let token: CapabilityToken | undefined
    let tokenProblem: string | undefined
    let presentedById = false
    if (tokenText !== undefined) {
      const parsed = parseToken(tokenText)
      if (typeof parsed === 'string') tokenProblem = parsed
      else token = parsed
    } else if (typeof request.capability_id === 'string' && !has('ignore-capability-id') && (authenticated || has('capability-id-without-auth'))) {
      token = issued.get(request.capability_id)
      presentedById = true
      if (token === undefined) tokenProblem = `capability ${request.capability_id} was not issued here`
    }
    const capabilityId = token?.id ?? (presentedById ? (request.capability_id ?? null) : null)
    const decision = decisionOf(method, m)
    if (capabilityId !== null && revoked.has(capabilityId) && !has('ignore-revocation') && !(has('revocation-only-on-deny-routes') && decision === 'SessionAllow')) {
      return deny('RevocationGuard', `capability ${capabilityId} has been revoked`, [], capabilityId)
    }
    if (decision === 'SessionAllow') {
      const sessionEvidence: GuardEvidence[] = [{ guard_name: 'DefaultPolicyGuard', verdict: true, details: 'session-scoped allow' }]
      if (has('nonce-on-every-route')) {
        const nonceDecision = nonceStep(request, pattern, nonceHeader, sessionEvidence, capabilityId, deny)
        if (nonceDecision !== undefined) return nonceDecision
      }
      return { verdict: { verdict: 'allow' }, evidence: sessionEvidence, capabilityId, pattern }
    }
    const allowByFault = (has('allow-mutating-without-token') && m.matched) || (has('allow-unknown-capability-id') && presentedById)
    if (token === undefined && tokenProblem === undefined && !allowByFault) return deny('CapabilityGuard', `capability required: ${method} ${pattern} is deny-by-default`, [], null)
    if (token === undefined && !allowByFault && !(has('allow-any-token') && tokenText !== undefined)) {
      return deny('CapabilityGuard', `invalid capability: ${tokenProblem ?? 'none'}`, [], capabilityId)
    }
    let plan: CapturePlan | undefined
    if (token !== undefined && !allowByFault) {
      const use = tokenDenial(token, request, pattern, m.route?.operationId, header)
      if (use.denial !== undefined) return deny('CapabilityGuard', `invalid capability: ${use.denial}`, [], capabilityId)
      plan = use.plan
    }
    const evidence: GuardEvidence[] = [{ guard_name: 'CapabilityGuard', verdict: true, details: `capability ${token?.id ?? '(fault)'} grants ${method} ${pattern}` }]
    const nonceDecision = nonceStep(request, pattern, nonceHeader, evidence, capabilityId, deny)
    if (nonceDecision !== undefined) return nonceDecision
    if (plan !== undefined) {
      const exhausted = counters.capture(plan)
      if (exhausted !== undefined) return deny('BudgetGuard', `capability ${token!.id}: ${exhausted}`, evidence, capabilityId)
    }
    const restricted = m.route?.sensitivity === 'restricted' && !has('ignore-restricted')
    if ((m.route?.approvalRequired === true || restricted) && !has('ignore-approval')) {
      const binding = `${callerHash(request.caller)} ${method} ${pattern} ${String(request.path)} ${request.body_hash ?? ''}`
      if (approvalHeader !== undefined) {
        const held = approvals.get(approvalHeader)
        if (held === undefined || held.state !== 'approved' || held.binding !== binding) {
          const d = deny('ApprovalGuard', `approval ${approvalHeader} does not allow this request`, evidence, capabilityId)
          ;(d.verdict as { details?: unknown }).details = { reason_code: 'approval_invalid' }
          return d
        }
        if (!has('approval-reusable')) held.state = 'used'
        return { verdict: { verdict: 'allow' }, evidence: [...evidence, { guard_name: 'ApprovalGuard', verdict: true, details: `approval ${approvalHeader}` }], capabilityId, pattern }
      }
      const approvalId = sha256Hex(uuidv7()).slice(0, 32)
      approvals.set(approvalId, { binding, state: 'pending' })
      if (has('approval-as-403')) return deny('CapabilityGuard', 'approval required', evidence, capabilityId)
      const d = deny('ApprovalGuard', 'approval required', evidence, capabilityId, 409)
      ;(d.verdict as { details?: unknown }).details = { reason_code: 'approval_required' }
      return { ...d, approval: { approval_id: approvalId, resume_path: `/approvals/${approvalId}/respond` } }
    }
    return { verdict: { verdict: 'allow' }, evidence, capabilityId, pattern }
  }

  /**
   * Strict nonces: no nonce → incomplete with a new signed nonce bound to the request; a presented one
   * must verify, be known, unexpired, unused and bound to this request (it is then used up). Undefined: go on.
   */
  function nonceStep(
    request: GateHttpRequest,
    pattern: string,
    nonceHeader: string | undefined,
    evidence: GuardEvidence[],
    capabilityId: string | null,
    deny: (guard: string, reason: string, evidence: GuardEvidence[], capabilityId: string | null) => Decision,
  ): Decision | undefined {
    if (!strictNonces || has('no-nonce-preflight')) return undefined
    const bound = {
      caller_identity_hash: callerHash(request.caller),
      method: request.method as HttpMethod,
      route_pattern: pattern,
      content_hash: requestContentHash(request, pattern),
    }
    const binding = `${bound.caller_identity_hash} ${bound.method} ${bound.route_pattern} ${bound.content_hash}`
    const presented = request.execution_nonce
    if (presented !== undefined && !has('nonce-signature-unchecked')) {
      const { signature, ...body } = presented
      if (presented.kernel_key !== signer.publicKey || !verifySignature(presented.kernel_key, utf8(canonicalJson(body)), signature)) {
        return deny('NonceGuard', 'execution nonce signature does not verify', evidence, capabilityId)
      }
    }
    const id = presented?.nonce_id ?? (has('nonce-header-ignored') ? undefined : nonceHeader)
    const now = Math.floor(Date.now() / 1000)
    if (id === undefined) {
      const nonceFields = {
        schema: 'gate.execution_nonce.v1' as const,
        nonce_id: sha256Hex(uuidv7()).slice(0, 32),
        request_id: request.request_id,
        ...bound,
        issued_at: now,
        expires_at: now + nonceTtlSeconds,
        kernel_key: signer.publicKey,
      }
      const expiresAt = has('nonce-expiry-from-start') ? startedAt + nonceTtlSeconds : nonceFields.expires_at
      nonces.set(nonceFields.nonce_id, { binding, expiresAt, used: false })
      return {
        verdict: { verdict: 'incomplete', reason: 'execution nonce required' },
        evidence: [...evidence, { guard_name: 'NonceGuard', verdict: false, details: 'strict nonce preflight' }],
        capabilityId,
        pattern,
        executionNonce: { ...nonceFields, signature: signer.sign(utf8(canonicalJson(nonceFields))) },
      }
    }
    const held = has('nonce-never-accepted') ? undefined : nonces.get(id)
    if (held === undefined) return deny('NonceGuard', `execution nonce ${id} is unknown`, evidence, capabilityId)
    // the expiry recorded at issue (a nonce named in X-Gate-Execution-Nonce carries none); expired from
    // expires_at on, as in Gate's nonce store
    if (now >= held.expiresAt && !has('nonce-never-expires')) return deny('NonceGuard', `execution nonce ${id} expired at ${held.expiresAt}`, evidence, capabilityId)
    if (held.used && !has('nonce-reusable')) return deny('NonceGuard', `execution nonce ${id} is used`, evidence, capabilityId)
    if (held.binding !== binding && !has('nonce-unbound')) return deny('NonceGuard', `execution nonce ${id} is bound to another request`, evidence, capabilityId)
    held.used = true
    evidence.push({ guard_name: 'NonceGuard', verdict: true, details: `execution nonce ${id} used` })
    return undefined
  }

  function parseToken(text: string): CapabilityToken | string {
    const t = text.trim()
    let json = t
    if (!t.startsWith('{')) {
      if (!/^[A-Za-z0-9_-]+={0,2}$/.test(t)) return 'neither JSON nor base64url JSON'
      json = Buffer.from(t, 'base64url').toString('utf8')
    }
    try {
      const v = JSON.parse(json) as unknown
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as CapabilityToken) : 'not a JSON object'
    } catch {
      return 'not valid JSON'
    }
  }

  /** Why a parsed token does not let this request through (or undefined), and the counters it advances. */
  function tokenDenial(token: CapabilityToken, request: GateHttpRequest, pattern: string, operationId: string | undefined, header: string | undefined): TokenUse {
    const method = String(request.method)
    if (has('allow-any-token')) return { denial: undefined }
    if (has('deny-all-tokens')) return { denial: 'this sidecar denies every token' }
    if (has('base64-tokens-only') && header?.trim().startsWith('{')) return { denial: 'tokens must be base64url' }
    const now = Math.floor(Date.now() / 1000)
    if (has('skip-token-signature')) {
      if (token.issuer !== signer.publicKey) return { denial: 'untrusted issuer' }
      if (now >= token.expires_at) return { denial: 'expired' }
      return { denial: (token.scope?.grants ?? []).some(g => grantCovers(g, method, pattern, operationId)) ? undefined : `no grant covers ${method} ${pattern}` }
    }
    const trusted = has('trust-any-issuer') ? [...trustedIssuers, String(token.issuer)] : trustedIssuers
    const at = has('ignore-expiry') ? token.issued_at : now
    if (has('ignore-scope')) {
      const v = verifyCapability(token, { trustedIssuers: trusted, now: at })
      return { denial: v.ok ? undefined : v.reason }
    }
    return decideToken(token, httpCall(request, pattern, operationId), trusted, at, {
      ignoreDelegationScope: has('ignore-delegation-scope'),
      denyDelegatedChildren: has('deny-delegated-children'),
      ignoreTokenFields: has('ignore-token-fields'),
      ignoreGrantFields: has('ignore-grant-fields'),
      ignoreMaxInvocations: has('ignore-max-invocations'),
      perTokenBudgets: has('per-token-budgets'),
    })
  }

  function grantCovers(g: ToolGrant, method: string, pattern: string, operationId: string | undefined): boolean {
    return (g.server_id === 'http' || g.server_id === '*') && (g.tool_name === '*' || g.tool_name === `${method} ${pattern}` || (operationId !== undefined && g.tool_name === operationId))
  }

  return { decide }
}

/**
 * Other readings of a path: `%2F` decoded to a separator, one trailing slash dropped, and (with
 * `suffixes`) a format suffix cut off the last segment at its first dot.
 */
function readingsOf(path: string, suffixes: boolean): string[] {
  const readings = new Set<string>()
  for (const spelled of [path, path.replace(/%2f/gi, '/')]) {
    const trimmed = spelled.length > 1 && spelled.endsWith('/') ? spelled.slice(0, -1) : spelled
    readings.add(trimmed)
    const lastSlash = trimmed.lastIndexOf('/')
    const dot = trimmed.indexOf('.', lastSlash)
    if (suffixes && dot > lastSlash + 1) readings.add(trimmed.slice(0, dot))
  }
  readings.delete(path)
  return [...readings]
}

function paramCount(pattern: string): number {
  return (pattern.match(/\{[^{}]+\}/g) ?? []).length
}

/** The param-matches-rest fault: a trailing `{param}` swallows any number of segments. */
function matchesRest(pattern: string, path: string): boolean {
  if (!/\/\{[^{}/]+\}$/.test(pattern)) return false
  const prefix = pattern.split('/').slice(0, -1)
  const segments = path.split('/')
  if (segments.length <= prefix.length) return false
  return patternMatches(prefix.join('/'), segments.slice(0, prefix.length).join('/')) && segments.slice(prefix.length).every(s => s !== '')
}
