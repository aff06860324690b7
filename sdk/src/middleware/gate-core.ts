// The framework-neutral core (STYLE, Adapters): builds the GateHttpRequest, hashes identity and body,
// asks the sidecar, checks the receipt, fails closed, and maps the verdict to an outcome. The platform
// (transport, schema check, receipt check) is injected so the same core runs on Node (sockets, ajv,
// verification off the event loop when it is busy) and on the edge (fetch, precompiled validators).
// The common request (no body, no hook, no Gate header, an allow) takes no await it does not need:
// every step here is measured in docs/performance.md, "The middleware's own cost".
import { isGateError } from '../errors.js'
import { checkHttpReceipt, type HttpReceiptCheck } from '../protocol/http-receipt.js'
import { HTTP_METHODS, type CallerIdentity, type GateHttpRequest, type HttpMethod } from '../types.js'
import { extractCallerIdentity } from './caller-identity.js'
import { selectForwardHeaders } from './forward-headers.js'
import { readGateHeaders } from './gate-headers.js'
import { buildGateHttpRequest } from './gate-http-request.js'
import type { GateAllowed, GateContext, GateCore, GateOutcome, GateRequestInput } from './gate-types.js'
import { FAIL_OPEN_CODES, IdentifyHookError, InvalidReceiptError, TargetNotOriginFormError, UnsupportedMethodError } from '../errors.js'
import { resolveGateOptions, type GateMiddlewareOptions, type ResolvedGateOptions } from './options.js'
import { parseQuery } from './query.js'
import { refuseMethodOverride } from './method-override.js'
import { isKnownBodyless, readBody } from './read-body.js'
import { receiptBindingProblem } from './receipt-binding.js'
import { toOpenApiPattern } from './route-pattern.js'
import { traceHeaders } from './trace-context.js'
import { SidecarClient, type SchemaCheck, type SidecarAnswer, type SidecarTransport } from './sidecar-client.js'
import { SidecarKey } from './sidecar-key.js'
import { toErrorOutcome, toFailOpenOutcome, toOutcome } from './to-outcome.js'

/** Verifies a receipt against the sidecar's key; `receiptText` is the receipt's JSON as the sidecar sent it, when known. */
export type ReceiptCheck = (receipt: unknown, trustedKeys: readonly string[], receiptText: string | undefined) => HttpReceiptCheck | Promise<HttpReceiptCheck>

/** What differs between Node and the edge: the transport, the schema check and the receipt check. */
export interface GatePlatform {
  createTransport(options: ResolvedGateOptions): SidecarTransport
  check: SchemaCheck
  /** Default `checkHttpReceipt`, on the calling thread. */
  checkReceipt?: ReceiptCheck
}

/** Nonces remembered from strict-preflight answers (nonce id → bound request id), oldest dropped first. */
const NONCE_MEMORY_LIMIT = 10_000
const METHODS: ReadonlySet<string> = new Set(HTTP_METHODS)
const SKIPPED: GateAllowed = Object.freeze({ allowed: true, headers: Object.freeze({}), gate: null, body: null, rawQuery: null, removeHeaders: Object.freeze([]) })

/** Creates a core on the given platform; options are validated here, before any request. */
export function createGateCoreOn(platform: GatePlatform, options: GateMiddlewareOptions | undefined): GateCore {
  const resolved = resolveGateOptions(options)
  const client = new SidecarClient(platform.createTransport(resolved), platform.check, resolved.sidecarToken)
  const key = new SidecarKey(resolved.sidecarPublicKey, () => client.live())
  const nonces = new Map<string, string>()
  const checkSignedReceipt: ReceiptCheck = platform.checkReceipt ?? ((receipt, trustedKeys, receiptText) => checkHttpReceipt(receipt, { trustedKeys, receiptText }))
  const verifyLocally = resolved.verifyReceipts === 'local'

  async function decide(input: GateRequestInput): Promise<GateOutcome> {
    if (resolved.skip.length > 0 && isSkipped(resolved.skip, input.path)) return SKIPPED
    let request: GateHttpRequest | undefined
    let body: Uint8Array | null = null
    let rawQuery: string | null = null
    let answered = false
    try {
      const method = METHODS.has(input.method) ? input.method : input.method.toUpperCase()
      if (!METHODS.has(method)) throw new UnsupportedMethodError(input.method)
      // `OPTIONS *` or an absolute-form target (`GET http://host/pets`): the framework routes a path it
      // parses out of it, the sidecar would evaluate the text as sent, so the two could disagree on
      // the route (and its policy). Refused, as gate api protect refuses them.
      if (!input.path.startsWith('/')) throw new TargetNotOriginFormError(input.path)
      const parsed = parseQuery(input.rawQuery)
      rawQuery = parsed.strippedRawQuery
      const gateHeaders = readGateHeaders(input.headers, input.rawHeaders, parsed.capability)
      body = isKnownBodyless(input.body, input.headers) ? null : await readBody(input.body, input.headers, resolved.maxBodyBytes)
      // decided on this method, so never executed as another (method-override.ts)
      refuseMethodOverride(input.headers, parsed.query, body)
      const caller = resolved.identify === null ? extractCallerIdentity(input.headers, resolved.identityCookie) : await identify(input)
      request = buildGateHttpRequest({
        method: method as HttpMethod,
        path: input.path,
        routePattern: input.routePattern ? toOpenApiPattern(input.routePattern) : input.path,
        caller,
        body,
        query: parsed.query,
        headers: selectForwardHeaders(input.headers, resolved.forwardHeaders),
      })

      // the key fetch (first request only) runs beside the evaluation instead of after it
      let signerKey: string | Promise<string> | undefined
      if (verifyLocally) {
        signerKey = key.known() ?? key.get()
        if (typeof signerKey !== 'string') signerKey.catch(() => undefined)
      }
      const trace = traceHeaders(input.headers)
      const answer = await client.evaluate(request, trace === undefined ? gateHeaders : { ...gateHeaders, trace })
      answered = true
      const checked = checkReceipt(answer, request, gateHeaders.nonceId, signerKey)
      if (checked !== undefined) await checked
      const { value } = answer
      if (value.verdict.verdict === 'incomplete' && value.execution_nonce !== undefined) remember(value.execution_nonce.nonce_id, value.receipt.request_id)
      const gate: GateContext = Object.freeze({
        requestId: request.request_id,
        caller,
        verdict: value.verdict,
        receipt: value.receipt,
        evidence: value.evidence,
        failOpen: null,
        executionNonce: value.execution_nonce ?? null,
      })
      return toOutcome(value, gate, body, rawQuery)
    } catch (err) {
      // fail closed: only an explicit onSidecarError 'allow' passes, and only when the sidecar could not be
      // asked at all; once it answered (a deny, say), a failing key fetch or /gate/verify never passes
      if (resolved.onSidecarError === 'allow' && request !== undefined && !answered && isGateError(err) && FAIL_OPEN_CODES.has(err.code)) {
        const gate: GateContext = Object.freeze({ requestId: request.request_id, caller: request.caller, verdict: null, receipt: null, evidence: [], failOpen: err.code, executionNonce: null })
        return toFailOpenOutcome(err.code, gate, body, rawQuery)
      }
      return toErrorOutcome(err, isGateError(err) && err.code === 'gate_payload_too_large' ? { connection: 'close' } : {})
    }
  }

  async function identify(input: GateRequestInput): Promise<CallerIdentity> {
    let custom: CallerIdentity | null | undefined
    try {
      custom = await (resolved.identify as NonNullable<ResolvedGateOptions['identify']>)(input)
    } catch (err) {
      throw new IdentifyHookError((err as Error)?.message ?? 'it threw', err)
    }
    if (custom === null || custom === undefined) return extractCallerIdentity(input.headers, resolved.identityCookie)
    const result = platform.check('gate.http.caller_identity.v1', custom)
    if (!result.ok) throw new IdentifyHookError(`it returned an invalid CallerIdentity: ${result.errors.slice(0, 3).join('; ')}`)
    return custom
  }

  /** Throws InvalidReceiptError when the receipt is not this request's or does not verify; a promise only when it must wait. */
  function checkReceipt(answer: SidecarAnswer, request: GateHttpRequest, nonceId: string | undefined, signerKey: string | Promise<string> | undefined): Promise<void> | undefined {
    const { value } = answer
    const problem = receiptBindingProblem(value, { request, nonceId, nonceBoundRequestId: nonceId === undefined ? undefined : nonces.get(nonceId) })
    if (problem !== undefined) throw new InvalidReceiptError(problem)
    if (typeof signerKey === 'string') return judge(checkSigned(value.receipt, signerKey, answer.receiptText))
    if (signerKey !== undefined) return signerKey.then(k => judge(checkSigned(value.receipt, k, answer.receiptText)))
    if (resolved.verifyReceipts === 'sidecar') {
      return client.verify(value.receipt).then(verified => {
        if (!verified.ok) throw new InvalidReceiptError('the sidecar\'s /gate/verify did not confirm it')
      })
    }
    return undefined
  }

  function checkSigned(receipt: unknown, trustedKey: string, receiptText: string | undefined): HttpReceiptCheck | Promise<HttpReceiptCheck> {
    try {
      return checkSignedReceipt(receipt, [trustedKey], receiptText)
    } catch (err) {
      throw couldNotVerify(err)
    }
  }

  function judge(check: HttpReceiptCheck | Promise<HttpReceiptCheck>): Promise<void> | undefined {
    if (isPromise(check)) return check.then(judgeNow, err => Promise.reject(couldNotVerify(err)))
    judgeNow(check)
    return undefined
  }

  function remember(nonceId: string, requestId: string): void {
    if (nonces.size >= NONCE_MEMORY_LIMIT) nonces.delete(nonces.keys().next().value as string)
    nonces.set(nonceId, requestId)
  }

  return { decide, close: () => client.close() }
}

function judgeNow(check: HttpReceiptCheck): void {
  if (!check.response.ok) throw new InvalidReceiptError(check.failedStep === 'signer' ? 'signed by a key other than the sidecar\'s' : check.detail)
}

/** A receipt that could not be checked is a receipt that did not verify. */
function couldNotVerify(err: unknown): InvalidReceiptError {
  return new InvalidReceiptError(`it could not be verified (${(err as Error)?.message ?? String(err)})`)
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown }).then === 'function'
}

function isSkipped(skip: readonly (string | RegExp)[], path: string): boolean {
  for (const s of skip) if (typeof s === 'string' ? s === path : s.test(path)) return true
  return false
}

/** `target` (a request target: path, then `?query`) with the query the app should see; unchanged when `outcome.rawQuery` is null. */
export function appTarget(target: string, outcome: GateAllowed): string {
  if (outcome.rawQuery === null) return target
  const q = target.indexOf('?')
  const path = q < 0 ? target : target.slice(0, q)
  return outcome.rawQuery === '' ? path : `${path}?${outcome.rawQuery}`
}
