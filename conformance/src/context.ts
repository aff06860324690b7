// What every check gets: the sidecar's HTTP client, the document's policy rows, the optional control
// token and SDK under test, and helpers for the exchanges most checks share. Lazily computed shared
// values (the kernel key, the sample evaluations) are computed once per run.
import type { CallerIdentity, CapabilityToken, EvaluateResponse, GateHttpRequest, Signer, ToolGrant } from '@gate/sdk'
import { fail, skip } from './check-outcome.js'
import { ControlClient, createUntrustedSigner } from './capability-tokens.js'
import { bearerCaller, buildRequest, callersOfEveryKind } from './gate-request.js'
import type { RecordingUpstream } from './fakes/recording-upstream.js'
import type { HttpAnswer, HttpClient, RequestBody } from './http-client.js'
import { concretePath, unmatchedPath, type PolicyDocument, type PolicyRoute } from './policy.js'
import type { ReceiptStoreAccess } from './receipt-store.js'
import type { SdkUnderTest } from './sdk-under-test.js'

/** The parsed 200 answer of /gate/evaluate (plus Gate's additive `approval`). */
export interface EvaluateAnswer extends EvaluateResponse {
  approval?: { approval_id: string; resume_path: string }
}

/** One evaluation: what was sent and what came back. */
export interface Evaluation {
  sent: GateHttpRequest
  answer: EvaluateAnswer
  http: HttpAnswer
}

/** Extra headers of an evaluate call. */
export interface EvaluateHeaders {
  capability?: string
  approvalId?: string
  nonce?: string
  [other: string]: string | undefined
}

/** The sample evaluations the receipt checks recompute hashes over. */
export interface Samples {
  /** GET on an unmatched path with an unsorted, non-ASCII query and a bearer caller. */
  allow: Evaluation
  /** POST with a body on an unmatched path (method rule: deny). */
  deny: Evaluation
  /** GET on a SessionAllow route of the document with `{param}` filled, when there is one. */
  matched: Evaluation | undefined
  all: Evaluation[]
}

export interface CheckContextInit {
  http: HttpClient
  policy: PolicyDocument
  controlToken: string | null
  sdkUnderTest: SdkUnderTest | null
  /** Why the sdk.* checks skip when sdkUnderTest is null. */
  sdkNote: string
  /** The sidecar runs with strict execution nonces: only the nonces.* checks apply. */
  strictNonces?: boolean
  /** A signer whose key the sidecar trusts as a capability issuer (delegation and token-field checks). */
  issuer?: Signer | null
  /** The sidecar's receipt store, where the suite owns it (the checks that alter a stored receipt). */
  receiptStore?: ReceiptStoreAccess | null
  /** The upstream the sidecar under test forwards to as a proxy (proxy.* checks), recording what arrives. */
  proxyUpstream?: RecordingUpstream | null
}

export class CheckContext {
  readonly http: HttpClient
  readonly #policy: PolicyDocument
  readonly controlToken: string | null
  readonly sdkUnderTest: SdkUnderTest | null
  readonly sdkNote: string
  readonly strictNonces: boolean
  /** A key the sidecar trusts as an issuer, or null (the checks needing one are skipped). */
  readonly issuer: Signer | null
  /** The sidecar's receipt store, or null (the checks that alter a stored receipt are skipped). */
  readonly receiptStore: ReceiptStoreAccess | null
  /** The recording upstream the sidecar forwards to as a proxy, or null (the proxy.* checks are skipped). */
  readonly proxyUpstream: RecordingUpstream | null
  /** A key the sidecar does not trust: for locally minted tokens and foreign-signed receipts. */
  readonly untrustedSigner: Signer = createUntrustedSigner()
  #samples: Promise<Samples> | undefined
  #kernelKey: Promise<string | null> | undefined
  #counter = 0
  #usedDocument = false

  constructor(init: CheckContextInit) {
    this.http = init.http
    this.#policy = init.policy
    this.controlToken = init.controlToken
    this.sdkUnderTest = init.sdkUnderTest
    this.sdkNote = init.sdkNote
    this.strictNonces = init.strictNonces === true
    this.issuer = init.issuer ?? null
    this.receiptStore = init.receiptStore ?? null
    this.proxyUpstream = init.proxyUpstream ?? null
  }

  /** The OpenAPI document the expectations come from; reading it marks the running check as depending on it. */
  get policy(): PolicyDocument {
    this.#usedDocument = true
    return this.#policy
  }

  /** Starts a check: forgets whether the previous one read the document. */
  startCheck(): void {
    this.#usedDocument = false
  }

  /** Whether the running check read the document (its routes, requests for them, or its bytes). */
  get usedDocument(): boolean {
    return this.#usedDocument
  }

  /** A short unique suffix for paths and ids of this run. */
  unique(): string {
    this.#counter++
    return `${Date.now().toString(36)}-${this.#counter}`
  }

  /** POST /gate/evaluate with `body` (a request object, or raw text/bytes/chunks sent as is). */
  evaluateRaw(body: unknown, headers: EvaluateHeaders = {}, timeoutMs?: number): Promise<HttpAnswer> {
    const raw = typeof body === 'string' || body instanceof Uint8Array || isAsyncIterable(body) ? (body as RequestBody) : JSON.stringify(body)
    return this.http.send({ method: 'POST', path: '/gate/evaluate', headers: evaluateHeaders(headers), body: raw, timeoutMs })
  }

  /** POST /gate/evaluate; fails the check unless the answer is 200 with a verdict and a receipt. */
  async evaluate(sent: GateHttpRequest, headers: EvaluateHeaders = {}): Promise<Evaluation> {
    const http = await this.evaluateRaw(sent, headers)
    return { sent, answer: expectEvaluateAnswer(http, `${sent.method} ${sent.path}`), http }
  }

  /** POST /gate/verify with a receipt (or any value / raw text). */
  verifyRaw(body: unknown, timeoutMs?: number): Promise<HttpAnswer> {
    const raw = typeof body === 'string' || body instanceof Uint8Array || isAsyncIterable(body) ? (body as RequestBody) : JSON.stringify(body)
    return this.http.send({ method: 'POST', path: '/gate/verify', headers: { 'content-type': 'application/json' }, body: raw, timeoutMs })
  }

  get(path: string): Promise<HttpAnswer> {
    return this.http.send({ method: 'GET', path, headers: { accept: 'application/json' } })
  }

  /** The signer key the sidecar publishes on /gate/live (Gate's additive kernel_key), else null. */
  kernelKey(): Promise<string | null> {
    this.#kernelKey ??= this.get('/gate/live').then(
      res => {
        const key = (res.json as { kernel_key?: unknown } | undefined)?.kernel_key
        return res.status === 200 && typeof key === 'string' ? key : null
      },
      () => null,
    )
    return this.#kernelKey
  }

  /** The first route of the document matching `predicate`; skips the check naming `what` otherwise. */
  route(what: string, predicate: (r: PolicyRoute) => boolean): PolicyRoute {
    const route = this.policy.routes.find(predicate)
    if (route === undefined) skip(`the document (${this.policy.source}) has no ${what}`)
    return route
  }

  /** Every route of the document matching `predicate`. */
  routes(predicate: (r: PolicyRoute) => boolean): PolicyRoute[] {
    return this.policy.routes.filter(predicate)
  }

  /** A path no route of the document matches; skips the check when none can be found. */
  unmatched(): string {
    const path = unmatchedPath(this.#policy.routes, this.unique())
    if (path === undefined) skip(`every candidate path matches a route of ${this.#policy.source}`)
    return path
  }

  /** A request for a concrete path of `route`. */
  requestFor(route: PolicyRoute, init: { body?: string | null; caller?: CallerIdentity; query?: Record<string, string>; capabilityId?: string | null; extra?: Record<string, unknown> } = {}): GateHttpRequest {
    this.#usedDocument = true
    return this.#requestFor(route, init)
  }

  #requestFor(route: PolicyRoute, init: Parameters<CheckContext['requestFor']>[1] = {}): GateHttpRequest {
    const body = init.body !== undefined ? init.body : route.method === 'GET' || route.method === 'HEAD' || route.method === 'OPTIONS' ? null : '{"name":"conformance"}'
    return buildRequest({ method: route.method, path: concretePath(route.pattern), routePattern: route.pattern, ...init, body })
  }

  /** The control routes; skips the check when no control token was given. */
  control(): ControlClient {
    if (this.controlToken === null) skip('needs --control-token (the sidecar must issue and revoke tokens)')
    return new ControlClient(this.http, this.controlToken)
  }

  /** The recording upstream behind the proxy under test; skips the check without one. */
  upstream(): RecordingUpstream {
    if (this.proxyUpstream === null) skip(NEEDS_PROXY)
    return this.proxyUpstream
  }

  /** The trusted issuer's signer; skips the check without one. */
  trustedIssuer(): Signer {
    if (this.issuer === null) skip('needs --issuer-seed-file (a key the sidecar trusts as a capability issuer)')
    return this.issuer
  }

  /** GET with the control token as bearer (the sidecar's /v1 routes); skips without one. */
  getWithControlToken(path: string): Promise<HttpAnswer> {
    if (this.controlToken === null) skip('needs --control-token')
    return this.http.send({ method: 'GET', path, headers: { accept: 'application/json', authorization: `Bearer ${this.controlToken}` } })
  }

  /** Issues a token through the control routes (skips without a control token). */
  issueToken(grants: ToolGrant[], ttlSeconds = 300): Promise<CapabilityToken> {
    return this.control().issue(grants, ttlSeconds)
  }

  /** The shared sample evaluations (computed once). */
  samples(): Promise<Samples> {
    this.#samples ??= this.#computeSamples()
    return this.#samples
  }

  async #computeSamples(): Promise<Samples> {
    const unmatched = unmatchedPath(this.#policy.routes, `samples-${this.unique()}`) ?? '/gate-conformance-unmatched-samples'
    const allow = await this.evaluate(
      buildRequest({
        method: 'GET',
        path: unmatched,
        // unsorted, mixed-case and non-ASCII keys: canonical JSON sorts them by UTF-16 code units
        query: { zeta: '1', Alpha: '2', 'é': 'accent', '\u{1F600}': 'emoji', a: '', '10': 'ten' },
        caller: bearerCaller('conformance-sample'),
        sessionId: 'conformance-session',
        routePattern: '/client-claims-this-pattern',
      }),
    )
    const deny = await this.evaluate(
      buildRequest({ method: 'POST', path: `${unmatched}/write`, body: '{"name":"conformance"}', caller: callersOfEveryKind()[2], query: { b: '2', a: '1' } }),
    )
    const safe = this.#policy.routes.find(r => r.decision === 'SessionAllow' && r.method === 'GET' && r.pattern.includes('{'))
      ?? this.#policy.routes.find(r => r.decision === 'SessionAllow' && r.method === 'GET')
    const matched = safe === undefined ? undefined : await this.evaluate(this.#requestFor(safe, { caller: callersOfEveryKind()[3], query: { q: 'x' } }))
    return { allow, deny, matched, all: [allow, deny, ...(matched === undefined ? [] : [matched])] }
  }
}

/** Why a proxy.* check is skipped without a recording upstream. */
export const NEEDS_PROXY = 'needs --proxy-upstream HOST:PORT and a proxy (gate api protect) forwarding there (or run gate-conformance --start-sidecar)'

/** Asserts an evaluate answer is 200 with a verdict object and a receipt object, and returns it. */
export function expectEvaluateAnswer(http: HttpAnswer, what: string): EvaluateAnswer {
  if (http.status !== 200) fail(`${what}: POST /gate/evaluate answered ${http.status} ${snippet(http.text)}`)
  const a = http.json as Partial<EvaluateAnswer> | undefined
  if (typeof a !== 'object' || a === null) fail(`${what}: the evaluate answer is not a JSON object: ${snippet(http.text)}`)
  if (typeof a.verdict !== 'object' || a.verdict === null || typeof a.verdict.verdict !== 'string') fail(`${what}: the answer has no verdict: ${snippet(http.text)}`)
  if (typeof a.receipt !== 'object' || a.receipt === null) fail(`${what}: the answer has no receipt: ${snippet(http.text)}`)
  return a as EvaluateAnswer
}

/** The first 300 characters of a body, for failure details. */
export function snippet(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

function evaluateHeaders(h: EvaluateHeaders): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' }
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue
    if (k === 'capability') out['x-gate-capability'] = v
    else if (k === 'approvalId') out['x-gate-approval-id'] = v
    else if (k === 'nonce') out['x-gate-execution-nonce'] = v
    else out[k] = v
  }
  return out
}

function isAsyncIterable(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Symbol.asyncIterator in v
}

