// A small node:http sidecar written for the suite's own tests. Without faults it implements the
// sidecar protocol (spec 02, with the policy rules of spec 01 and Gate's documented choices) closely
// enough to pass every check; each fault breaks exactly one behaviour, so a test can show that the
// check aimed at that behaviour FAILS. It is not Gate's sidecar and shares no code with it beyond the
// @gate/sdk protocol functions. Test support only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import {
  authoritySemanticsProblem,
  callerIdentityHash,
  canonicalJson,
  checkSignature,
  contentHash,
  createSigner,
  generateSecret,
  sha256Hex,
  signCapability,
  signHttpReceiptJson,
  utf8,
  uuidv7,
  verifyCapability,
  type CapabilityToken,
  type GateHttpRequest,
  type CapturePlan,
  type GuardEvidence,
  type HttpMethod,
  type HttpReceipt,
  type HttpReceiptBody,
  type SignedExecutionNonce,
  type ToolGrant,
  type Verdict,
  verifySignature,
} from '@gate/sdk'
import { validate } from '@gate/schemas'
import { DEFAULT_SPEC_TEXT } from '../default-spec.js'
import { classify, patternMatches, routesFromDocument, type PolicyRoute } from '../policy.js'
import { findDuplicateQueryKey } from './duplicate-query-key.js'
import { listenOnLoopback } from '../fakes/loopback.js'
import { coreReceiptOf, createCounters, decideToken, httpCall, type TokenUse } from './broken-capabilities.js'

/** One broken behaviour, named after what the sidecar does wrong. */
export const SIDECAR_FAULTS = [
  'text-content-type', // /gate/live answers Content-Type text/plain
  'deny-status-403', // /gate/evaluate answers HTTP 403 for a deny verdict
  'live-backends-set', // /gate/live names its backends
  'health-status-mismatch', // /gate/health answers 200 with status degraded
  'live-wrong-key', // /gate/live names a key other than the signing key
  'bad-json-500', // a body that is not JSON answers 500
  'no-request-validation', // any JSON body is evaluated as if it were a GateHttpRequest
  'accept-any-method', // a method outside the seven is evaluated (as unsafe)
  'accept-credential-headers', // raw Authorization/Cookie headers in GateHttpRequest.headers are accepted
  'no-caller-validation', // any caller value is accepted
  'no-duplicate-detection', // duplicate query keys are not detected (JSON.parse keeps the last)
  'naive-duplicate-detection', // duplicates are found by raw spelling only ("a" vs "\u0061" missed)
  'nonce-blank-ignored', // a blank nonce header counts as absent
  'nonce-unchecked', // any nonce header value is accepted
  'deny-safe-get', // GET on a matched route is deny-by-default
  'deny-head-options', // HEAD and OPTIONS are deny-by-default
  'head-method-rule', // HEAD is decided by the method rule, not as GET of its route
  'case-sensitive-method-rule', // a path differing from a route only in letter case gets the method rule
  'allow-mutating-without-token', // matched deny-by-default routes allow without a token
  'allow-unmatched', // unmatched paths are allowed whatever the method
  'ignore-side-effects', // x-gate-side-effects is not read
  'ignore-approval-precedence', // x-gate-side-effects is read before x-gate-approval-required
  'trust-client-route-pattern', // the client's route_pattern is used
  'unmatched-pattern-wildcard', // unmatched requests record route_pattern "*"
  'param-matches-rest', // a trailing {param} matches the rest of the path
  'ignore-supplemental', // supplemental_authorization is ignored
  'empty-deny-details', // deny verdicts carry details with every field null
  'answer-verdict-differs', // the answer's deny reason differs from the receipt's
  'omit-evidence', // the evaluate answer has no evidence member
  'allow-any-token', // a token that does not parse counts as valid
  'trust-any-issuer', // tokens verify against their own issuer key
  'ignore-expiry', // token expiry is not checked
  'ignore-scope', // grants are not matched against the route
  'skip-token-signature', // a token naming the trusted issuer is not signature-checked
  'allow-unknown-capability-id', // an unknown capability_id counts as a valid capability
  'deny-all-tokens', // every presented token is denied
  'base64-tokens-only', // a token sent as plain JSON is refused
  'ignore-query-token', // gate_capability is not read
  'query-token-wins', // gate_capability wins over the header
  'ignore-capability-id', // capability_id is not looked up
  'capability-id-without-auth', // capability_id is looked up for any caller, not only one with the control token
  'ignore-revocation', // revocations are not checked
  'ignore-max-invocations', // a grant's max_invocations is not counted
  'ignore-delegation-scope', // a child its delegatee signed is trusted like its signer: no attenuation proof
  'deny-delegated-children', // every child its delegatee signed is denied
  'ignore-token-fields', // token fields (schema, caveats, attenuations, aggregate budgets, share) are not read
  'ignore-grant-fields', // grants match by server and tool only (constraints, operations, DPoP, cost caps unread)
  'ignore-restricted', // x-gate-sensitivity restricted asks for no approval
  'core-id-copied', // served core receipts carry the HTTP receipt's id
  'revocation-only-on-deny-routes', // revocations are checked on deny-by-default routes only
  'ignore-approval', // a valid token allows an approval-gated route
  'approval-as-403', // a pending approval is a plain 403 CapabilityGuard deny
  'approval-reusable', // an approved approval allows its request any number of times
  'open-control-routes', // /v1 routes need no control token
  'stale-receipt-id', // the receipt id is not the hash of the receipt
  'unsigned-receipts', // receipts carry no signature
  'wrong-semantics', // receipts say tool_origin host_executed_unmediated
  'content-hash-keeps-capability', // content_hash includes the gate_capability parameter
  'content-hash-without-query', // content_hash leaves the query out
  'caller-hash-subject-only', // caller_identity_hash covers the subject only
  'caller-hash-as-sent', // caller_identity_hash hashes the caller as written, defaults not filled in
  'own-request-id', // the receipt gets a request_id of its own
  'allow-status-for-deny', // deny receipts record response_status 200
  'policy-hash-zero', // policy_hash is 64 zeros
  'timestamp-zero', // receipts are dated 1970
  'no-metadata', // receipts carry no metadata
  'verify-untrusted-own-key', // /gate/verify does not trust the sidecar's own key
  'verify-deny-authorized', // /gate/verify authorizes any ok receipt, deny included
  'verify-skip-id', // /gate/verify reports receipt_id_valid true without recomputing
  'verify-id-only', // /gate/verify reports signature_valid from the id check alone
  'verify-trust-embedded-key', // /gate/verify trusts whatever key a receipt names
  'verify-ed25519-only', // /gate/verify cannot verify P-256 or P-384 signatures
  'verify-skip-parameter-hash', // /gate/verify reports parameter_hash_valid true without looking
  'verify-skip-semantics', // /gate/verify ignores the authority semantics
  'verify-checks-timestamp', // /gate/verify rejects receipts older or newer than a day
  'verify-any-verdict-tag', // /gate/verify answers 200 with result "maybe" for an unknown verdict tag
  'verify-raw-result', // /gate/verify reports result "cancel" instead of "cancelled"
  'verify-accepts-anything', // /gate/verify answers 200 for a body that is not a receipt
  'verify-omit-field', // /gate/verify leaves signer_key_hex out
  'evaluate-limit-1mib', // /gate/evaluate reads at most 1 MiB
  'verify-limit-64kib', // /gate/verify reads at most 64 KiB
  'accept-oversized', // no body limit at all
  'limit-content-length-only', // the limit is enforced on Content-Length only, not on chunked bodies
  'drop-proto-keys', // query keys named __proto__ are lost before hashing
  'content-hash-code-point-sort', // query keys are sorted by code point, not UTF-16 code units
  'control-chars-500', // control characters in the path answer 500
  'large-integers-500', // integers beyond 2^53 answer 500
  'deep-nesting-500', // deeply nested bodies answer 500
  'huge-headers-500', // headers over 16 KiB answer 500
  // with strictNonces only:
  'no-nonce-preflight', // deny-by-default requests are allowed without a nonce
  'nonce-never-accepted', // a presented nonce is never found
  'nonce-reusable', // a nonce can be used any number of times
  'nonce-never-expires', // a nonce past its expires_at is still accepted
  'nonce-expiry-from-start', // every nonce expires one lifetime after the sidecar started, not after its issue
  'nonce-signature-unchecked', // a presented nonce is looked up by id, its signature ignored
  'nonce-unbound', // a nonce allows any request it is presented with
  'nonce-header-ignored', // X-Gate-Execution-Nonce is checked for form but not looked up
  'nonce-on-every-route', // session-allowed routes get the preflight too
] as const

export type SidecarFault = (typeof SIDECAR_FAULTS)[number]

export interface BrokenSidecarOptions {
  faults?: readonly SidecarFault[]
  /** Bearer token of the /v1 control routes. Default 'conformance-control-token'. */
  controlToken?: string
  /** The OpenAPI document (JSON text). Default: the suite's built-in document. */
  specText?: string
  /** Strict execution nonces (Gate's `--strict-nonces`): deny-by-default requests get a preflight. Default false. */
  strictNonces?: boolean
  /** Lifetime of an execution nonce (Gate's `--nonce-ttl-secs`), in seconds. Default 60. */
  nonceTtlSeconds?: number
  /** Issuer keys trusted besides its own (Gate's `--trusted-issuer`). Default none. */
  trustedIssuers?: readonly string[]
}

export interface BrokenSidecar {
  url: string
  publicKey: string
  close(): Promise<void>
}

const EVALUATE_LIMIT = 10 * 1024 * 1024
const VERIFY_LIMIT = 1024 * 1024
const HEADER_LIMIT = 16 * 1024
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])
const HEX64 = /^[0-9a-f]{64}$/
const ANONYMOUS = { subject: 'anonymous', auth_method: { method: 'anonymous' } }

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

interface RouteMatch {
  matched: boolean
  pattern: string
  route: PolicyRoute | undefined
}

/** Starts the broken sidecar on 127.0.0.1:0. */
export async function startBrokenSidecar(options: BrokenSidecarOptions = {}): Promise<BrokenSidecar> {
  const faults = new Set<SidecarFault>(options.faults ?? [])
  const has = (f: SidecarFault) => faults.has(f)
  const controlToken = options.controlToken ?? 'conformance-control-token'
  const specText = options.specText ?? DEFAULT_SPEC_TEXT
  const routes = routesFromDocument(JSON.parse(specText), 'broken-sidecar')
  const policyHash = sha256Hex(specText)
  const signer = createSigner({ secret: generateSecret() })
  const otherKey = createSigner({ secret: generateSecret() }).publicKey
  const issued = new Map<string, CapabilityToken>()
  const revoked = new Set<string>()
  // invocation counters (grants, aggregate budgets, families, shares), captured all or none
  const counters = createCounters()
  const trustedIssuers = [signer.publicKey, ...(options.trustedIssuers ?? [])]
  // every receipt signed, for GET /v1/receipts/query
  const receipts: HttpReceipt[] = []
  // approvals by id: what request they are bound to, and where they stand
  const approvals = new Map<string, { binding: string; state: 'pending' | 'approved' | 'denied' | 'used' }>()
  const nonceTtlSeconds = options.nonceTtlSeconds ?? 60
  const startedAt = Math.floor(Date.now() / 1000)
  // issued execution nonces by id: the request they are bound to, when they expire, and whether they were used
  const nonces = new Map<string, { binding: string; expiresAt: number; used: boolean }>()
  const server: Server = createServer({ maxHeaderSize: 4 * 1024 * 1024 }, (req, res) => {
    handle(req, res).catch(err => {
      if (err instanceof HttpFailure) return sendJson(res, err.status, { error: err.code, message: err.message, receipt_id: null, suggestion: null })
      sendJson(res, 500, { error: 'gate_evaluation_failed', message: String((err as Error)?.message ?? err), receipt_id: null, suggestion: null })
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://broken.local')
    const headerBytes = req.rawHeaders.reduce((n, h) => n + h.length + 2, 0)
    if (headerBytes > HEADER_LIMIT) {
      drain(req)
      if (has('huge-headers-500')) throw new HttpFailure(500, 'gate_evaluation_failed', 'headers too large for this sidecar')
      res.writeHead(431, { connection: 'close' })
      res.end()
      return
    }
    const route = `${req.method} ${url.pathname}`
    switch (route) {
      case 'GET /gate/live':
        return sendJson(
          res,
          200,
          { status: 'healthy', version: '0.0.0-broken', receipt_backend: has('live-backends-set') ? 'durable' : '', revocation_backend: has('live-backends-set') ? 'durable' : '', kernel_key: has('live-wrong-key') ? otherKey : signer.publicKey },
          has('text-content-type') ? 'text/plain' : 'application/json',
        )
      case 'GET /gate/health':
        return sendJson(res, 200, { status: has('health-status-mismatch') ? 'degraded' : 'healthy', version: '0.0.0-broken', receipt_backend: 'ephemeral', revocation_backend: 'ephemeral', kernel_key: signer.publicKey })
      case 'POST /gate/evaluate':
        return evaluateRoute(req, res)
      case 'POST /gate/verify':
        return verifyRoute(req, res)
      case 'POST /v1/capabilities/issue':
        return issueRoute(req, res)
      case 'POST /v1/revocations':
        return revokeRoute(req, res)
      case 'GET /v1/receipts/query':
        return queryRoute(req, res, url)
      default: {
        const respond = /^POST \/approvals\/([^/]+)\/respond$/.exec(route)
        if (respond !== null) return respondRoute(req, res, decodeURIComponent(respond[1]!))
        drain(req)
        return sendJson(res, 404, { error: 'gate_not_found', message: `no route ${route}`, receipt_id: null, suggestion: null })
      }
    }
  }

  // ---- bodies -------------------------------------------------------------------------------

  async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
    const effective = has('accept-oversized') ? Infinity : limit
    const declared = req.headers['content-length']
    if (declared !== undefined && Number(declared) > effective) {
      drain(req)
      throw new HttpFailure(400, 'gate_bad_request', `body exceeds ${limit} bytes`)
    }
    const streamingLimit = has('limit-content-length-only') ? Infinity : effective
    const chunks: Buffer[] = []
    let size = 0
    let over = false
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > streamingLimit) over = true
      else chunks.push(chunk as Buffer)
    }
    if (over) throw new HttpFailure(400, 'gate_bad_request', `body exceeds ${limit} bytes`)
    return Buffer.concat(chunks)
  }

  // ---- evaluate -----------------------------------------------------------------------------

  async function evaluateRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (await readBody(req, has('evaluate-limit-1mib') ? 1024 * 1024 : EVALUATE_LIMIT)).toString('utf8')
    const request = parseRequest(text)
    const nonceHeader = readNonce(req)
    const header = single(req.headers['x-gate-capability'])
    // the control token as a bearer: an authenticated caller, who may name a token by capability_id
    const authenticated = req.headers.authorization === `Bearer ${controlToken}`
    const { verdict, evidence, capabilityId, pattern, approval, executionNonce } = decide(request, header, single(req.headers['x-gate-approval-id']), nonceHeader, authenticated)
    const status = verdict.verdict === 'deny' ? (verdict.http_status ?? 403) : verdict.verdict === 'incomplete' ? 428 : 200
    const receipt = signReceipt(request, verdict, evidence, pattern, capabilityId, status)
    const answerVerdict = has('answer-verdict-differs') && verdict.verdict === 'deny' ? { ...verdict, reason: `${verdict.reason} (summary)` } : verdict
    const answer: Record<string, unknown> = { verdict: answerVerdict, receipt }
    if (!has('omit-evidence')) answer.evidence = evidence
    if (approval !== undefined) answer.approval = approval
    if (executionNonce !== undefined) answer.execution_nonce = executionNonce
    sendJson(res, has('deny-status-403') && verdict.verdict === 'deny' ? 403 : 200, answer)
  }

  function parseRequest(text: string): GateHttpRequest {
    if (has('deep-nesting-500') && nestingDepth(text) > 1000) throw new Error('stack overflow (deep nesting)')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      if (has('bad-json-500')) throw new Error(`parser crashed: ${(err as Error).message}`)
      throw new HttpFailure(400, 'gate_bad_request', `body is not valid JSON: ${(err as Error).message}`)
    }
    const v = value as Record<string, unknown>
    if (has('large-integers-500') && typeof v === 'object' && v !== null && [v.timestamp, v.body_length].some(n => typeof n === 'number' && !Number.isSafeInteger(n))) {
      throw new Error('integer overflow')
    }
    if (!has('no-request-validation')) {
      let checked: unknown = value
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        checked = { ...v }
        if (has('accept-any-method') && typeof v.method === 'string') (checked as Record<string, unknown>).method = 'POST'
        if (has('no-caller-validation')) (checked as Record<string, unknown>).caller = ANONYMOUS
        if (has('accept-credential-headers')) delete (checked as Record<string, unknown>).headers
      }
      const result = validate('gate.http.request.v1', checked)
      if (!result.ok) throw new HttpFailure(400, 'gate_bad_request', `body is not a GateHttpRequest: ${result.errors.slice(0, 3).join('; ')}`)
    }
    if (!has('no-duplicate-detection')) {
      const duplicate = findDuplicateQueryKey(text, { decodeEscapes: !has('naive-duplicate-detection') })
      if (duplicate !== undefined) throw new HttpFailure(400, 'gate_bad_request', `query key "${duplicate}" appears more than once`)
    }
    const request = value as GateHttpRequest
    if (has('control-chars-500') && typeof request.path === 'string' && /[\u0000-\u001f]/.test(request.path)) throw new Error('control character in path')
    return request
  }

  /** The X-Gate-Execution-Nonce value (a nonce id), checked well-formed. */
  function readNonce(req: IncomingMessage): string | undefined {
    const raw = req.headers['x-gate-execution-nonce']
    if (raw === undefined || has('nonce-unchecked')) return undefined
    const value = Array.isArray(raw) ? raw.join(',') : raw
    if (value.trim() === '') {
      if (has('nonce-blank-ignored')) return undefined
      throw new HttpFailure(400, 'gate_bad_request', 'x-gate-execution-nonce header is blank')
    }
    if (!/^[0-9a-f]{32}$/.test(value)) throw new HttpFailure(400, 'gate_bad_request', 'x-gate-execution-nonce header is malformed')
    return value
  }

  function matchRoute(method: string, path: string): RouteMatch {
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

  interface Decision {
    verdict: Verdict
    evidence: GuardEvidence[]
    capabilityId: string | null
    pattern: string
    approval?: { approval_id: string; resume_path: string }
    executionNonce?: SignedExecutionNonce
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
    if (options.strictNonces !== true || has('no-nonce-preflight')) return undefined
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
    if (has('base64-tokens-only') && header !== undefined && header.trim().startsWith('{')) return { denial: 'tokens must be base64url' }
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
    })
  }

  function grantCovers(g: ToolGrant, method: string, pattern: string, operationId: string | undefined): boolean {
    return (g.server_id === 'http' || g.server_id === '*') && (g.tool_name === '*' || g.tool_name === `${method} ${pattern}` || (operationId !== undefined && g.tool_name === operationId))
  }

  function signReceipt(request: GateHttpRequest, verdict: Verdict, evidence: GuardEvidence[], pattern: string, capabilityId: string | null, status: number) {
    const query = has('content-hash-without-query') ? {} : has('content-hash-keeps-capability') ? { ...request.query } : queryForHash(request.query)
    const hashInput = { body_hash: request.body_hash ?? null, method: String(request.method), path: String(request.path), query, route_pattern: pattern }
    const body: HttpReceiptBody = {
      request_id: has('own-request-id') ? uuidv7() : request.request_id,
      route_pattern: pattern,
      method: request.method as HttpMethod,
      caller_identity_hash: callerHash(request.caller),
      session_id: request.session_id ?? null,
      verdict,
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: has('wrong-semantics') ? 'host_executed_unmediated' : 'caller_executed',
      redaction_mode: 'none',
      evidence,
      response_status: has('allow-status-for-deny') ? 200 : status,
      timestamp: has('timestamp-zero') ? 0 : Math.floor(Date.now() / 1000),
      content_hash: has('content-hash-code-point-sort') ? codePointSortedHash(hashInput) : contentHash(hashInput),
      policy_hash: has('policy-hash-zero') ? '0'.repeat(64) : policyHash,
      trust_level: 'mediated',
      capability_id: capabilityId,
      metadata: has('no-metadata') ? null : { gate_http_status_scope: 'decision' },
    }
    const receipt = signHttpReceiptJson(body, signer).receipt as unknown as Record<string, unknown>
    receipts.push(receipt as unknown as HttpReceipt)
    if (has('unsigned-receipts')) delete receipt.signature
    if (has('stale-receipt-id')) {
      const { id: _id, signature: _sig, ...rest } = receipt
      const withStaleId = { ...rest, id: sha256Hex(`stale:${String(receipt.id)}`) }
      return { ...withStaleId, signature: signer.sign(utf8(canonicalJson(withStaleId))) }
    }
    return receipt
  }

  function requestContentHash(request: GateHttpRequest, pattern: string): string {
    return contentHash({ body_hash: request.body_hash ?? null, method: String(request.method), path: String(request.path), query: queryForHash(request.query), route_pattern: pattern })
  }

  function queryForHash(query: Record<string, string> | undefined): Record<string, string> {
    // Gate's choice (docs/kernel.md): the token is a credential, not content
    const copy: Record<string, string> = has('drop-proto-keys') ? Object.assign({}, query) : { ...query }
    delete copy.gate_capability
    return copy
  }

  function callerHash(caller: unknown): string {
    if (has('caller-hash-subject-only')) return sha256Hex(canonicalJson({ subject: (caller as { subject?: unknown })?.subject ?? null }))
    if (has('caller-hash-as-sent')) return sha256Hex(canonicalJson(caller))
    return callerIdentityHash(caller as GateHttpRequest['caller'])
  }

  // ---- verify -------------------------------------------------------------------------------

  async function verifyRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = (await readBody(req, has('verify-limit-64kib') ? 64 * 1024 : VERIFY_LIMIT)).toString('utf8')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      if (!has('verify-accepts-anything')) throw new HttpFailure(400, 'gate_bad_request', 'body is not valid JSON')
      value = {}
    }
    const r = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<string, unknown>
    const tag = (r.verdict as { verdict?: unknown } | undefined)?.verdict
    const tagOk = has('verify-any-verdict-tag') ? typeof tag === 'string' : ['allow', 'deny', 'cancel', 'incomplete'].includes(String(tag))
    const shapeOk = ['id', 'kernel_key', 'signature', 'content_hash', 'receipt_kind'].every(f => typeof r[f] === 'string') && tagOk
    if ((!shapeOk || r !== value) && !has('verify-accepts-anything')) throw new HttpFailure(400, 'gate_bad_request', 'body is not an HttpReceipt')
    sendJson(res, 200, verifyReceipt(r))
  }

  function verifyReceipt(r: Record<string, unknown>): Record<string, unknown> {
    const { signature: _sig, ...signed } = r
    const { id: _id, ...unsigned } = signed
    const kernelKey = typeof r.kernel_key === 'string' ? r.kernel_key : ''
    const semanticsOk = has('verify-skip-semantics') || authoritySemanticsProblem(r) === undefined
    const idValid = has('verify-skip-id') || (typeof r.id === 'string' && sha256Hex(canonicalJson(unsigned)) === r.id)
    const cryptoOk =
      has('verify-id-only') ||
      (typeof r.signature === 'string' && !(has('verify-ed25519-only') && kernelKey.includes(':')) && checkSignature(kernelKey, utf8(canonicalJson(signed)), r.signature).valid)
    const now = Math.floor(Date.now() / 1000)
    const timely = !has('verify-checks-timestamp') || Math.abs(Number(r.timestamp) - now) < 86_400
    const signatureValid = semanticsOk && idValid && cryptoOk && timely
    const trusted = has('verify-untrusted-own-key') ? [] : has('verify-trust-embedded-key') ? [signer.publicKey, kernelKey] : [signer.publicKey]
    const signerTrusted = kernelKey !== '' && trusted.includes(kernelKey)
    const parameterHashValid = has('verify-skip-parameter-hash') || HEX64.test(String(r.content_hash))
    const tag = String((r.verdict as { verdict?: unknown } | undefined)?.verdict ?? '')
    const result = has('verify-raw-result') ? tag : ({ allow: 'allow', deny: 'deny', cancel: 'cancelled', incomplete: 'incomplete' } as Record<string, string>)[tag] ?? tag
    const ok = signatureValid && signerTrusted && idValid && parameterHashValid && semanticsOk
    const answer: Record<string, unknown> = {
      signature_valid: signatureValid,
      signer_trusted: signerTrusted,
      receipt_id_valid: idValid,
      parameter_hash_valid: parameterHashValid,
      receipt_kind: String(r.receipt_kind ?? ''),
      boundary_class: String(r.boundary_class ?? ''),
      trust_level: String(r.trust_level ?? ''),
      result,
      authorized: has('verify-deny-authorized') ? ok : ok && result === 'allow',
      signer_key_hex: kernelKey,
      ok,
    }
    if (has('verify-omit-field')) delete answer.signer_key_hex
    return answer
  }

  // ---- control routes -----------------------------------------------------------------------

  function requireControl(req: IncomingMessage): void {
    if (has('open-control-routes')) return
    if (req.headers.authorization !== `Bearer ${controlToken}`) throw new HttpFailure(401, 'gate_unauthorized', 'control token required')
  }

  async function issueRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8')) as { subjectPublicKey: string; scope: CapabilityToken['scope']; ttlSeconds: number }
    requireControl(req)
    const now = Math.floor(Date.now() / 1000)
    const capability = signCapability(
      { schema: 'gate.capability.v1', id: `cap_${uuidv7()}`, subject: body.subjectPublicKey, scope: body.scope, issued_at: now, expires_at: now + body.ttlSeconds },
      signer,
    )
    issued.set(capability.id, capability)
    sendJson(res, 200, { capability })
  }

  async function respondRoute(req: IncomingMessage, res: ServerResponse, approvalId: string): Promise<void> {
    const body = JSON.parse((await readBody(req, 16 * 1024)).toString('utf8')) as { decision?: unknown }
    requireControl(req)
    const held = approvals.get(approvalId)
    if (held === undefined) throw new HttpFailure(404, 'gate_not_found', `no approval ${approvalId}`)
    if (held.state !== 'pending') throw new HttpFailure(409, 'gate_conflict', `approval ${approvalId} is ${held.state}`)
    if (body.decision !== 'approve' && body.decision !== 'deny') throw new HttpFailure(400, 'gate_bad_request', 'decision must be "approve" or "deny"')
    held.state = body.decision === 'approve' ? 'approved' : 'denied'
    sendJson(res, 200, { approval: { approval_id: approvalId, state: held.state }, receipt_id: null })
  }

  async function revokeRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8')) as { capabilityId: string }
    requireControl(req)
    const newlyRevoked = !revoked.has(body.capabilityId)
    revoked.add(body.capabilityId)
    sendJson(res, 200, { capabilityId: body.capabilityId, revoked: true, newlyRevoked })
  }

  /** GET /v1/receipts/query (control token; the toolName filter only): core receipts, oldest first. */
  async function queryRoute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    drain(req)
    requireControl(req)
    const toolName = url.searchParams.get('toolName')
    const matching = receipts.filter(r => toolName === null || `${r.method} ${r.route_pattern}` === toolName)
    const served = matching.slice(0, 200).map(r => coreReceiptOf(r, signer, has('core-id-copied')))
    sendJson(res, 200, { totalCount: matching.length, nextCursor: null, receipts: served })
  }

  return { ...(await listenOnLoopback(server)), publicKey: signer.publicKey }
}

function sendJson(res: ServerResponse, status: number, value: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(value)
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v
}

function drain(req: IncomingMessage): void {
  req.on('error', () => {})
  req.resume()
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

/** content_hash with the query keys sorted by code point (a fault: RFC 8785 sorts by UTF-16 units). */
function codePointSortedHash(input: { body_hash: string | null; method: string; path: string; query: Record<string, string>; route_pattern: string }): string {
  const keys = Object.keys(input.query).sort((a, b) => {
    const ca = [...a].map(c => c.codePointAt(0)!)
    const cb = [...b].map(c => c.codePointAt(0)!)
    for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!
    return ca.length - cb.length
  })
  const query = `{${keys.map(k => `${JSON.stringify(k)}:${JSON.stringify(input.query[k])}`).join(',')}}`
  return sha256Hex(`{"body_hash":${JSON.stringify(input.body_hash)},"method":${JSON.stringify(input.method)},"path":${JSON.stringify(input.path)},"query":${query},"route_pattern":${JSON.stringify(input.route_pattern)}}`)
}

/** Deepest bracket nesting of a JSON text, strings skipped. */
function nestingDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return max
}

