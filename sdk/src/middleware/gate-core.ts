// The framework-neutral core (STYLE, Adapters): builds the GateHttpRequest, hashes identity and body,
// asks the sidecar, checks the receipt, fails closed, and maps the verdict to an outcome. The platform
// (transport, schema check, receipt check) is injected so the same core runs on Node (undici, ajv,
// verification off the event loop when it is busy) and on the edge (fetch, precompiled validators).
import { isGateError } from '../errors.js'
import { checkHttpReceipt, type HttpReceiptCheck } from '../protocol/http-receipt.js'
import { sha256Hex } from '../protocol/sha256.js'
import { uuidv7 } from '../protocol/request-id.js'
import { HTTP_METHODS, type CallerIdentity, type GateHttpRequest, type HttpMethod } from '../types.js'
import { extractCallerIdentity } from './caller-identity.js'
import { selectForwardHeaders } from './forward-headers.js'
import { readGateHeaders } from './gate-headers.js'
import type { GateContext, GateCore, GateOutcome, GateRequestInput } from './gate-types.js'
import { FAIL_OPEN_CODES, IdentifyHookError, InvalidReceiptError, TargetNotOriginFormError, UnsupportedMethodError } from '../errors.js'
import { resolveGateOptions, type GateMiddlewareOptions, type ResolvedGateOptions } from './options.js'
import { parseQuery } from './query.js'
import { refuseMethodOverride } from './method-override.js'
import { readBody } from './read-body.js'
import { receiptBindingProblem } from './receipt-binding.js'
import { toOpenApiPattern } from './route-pattern.js'
import { SidecarClient, type SchemaCheck, type SidecarEvaluation, type SidecarTransport } from './sidecar-client.js'
import { SidecarKey } from './sidecar-key.js'
import { toErrorOutcome, toFailOpenOutcome, toOutcome } from './to-outcome.js'

/** What differs between Node and the edge: the transport, the schema check and the receipt check. */
export interface GatePlatform {
  createTransport(options: ResolvedGateOptions): SidecarTransport
  check: SchemaCheck
  /** Verifies a receipt against the sidecar's key; default `checkHttpReceipt`, on the calling thread. */
  checkReceipt?: (receipt: unknown, trustedKeys: readonly string[]) => HttpReceiptCheck | Promise<HttpReceiptCheck>
}

/** Nonces remembered from strict-preflight answers (nonce id → bound request id), oldest dropped first. */
const NONCE_MEMORY_LIMIT = 10_000
const METHODS: ReadonlySet<string> = new Set(HTTP_METHODS)

/** Creates a core on the given platform; options are validated here, before any request. */
export function createGateCoreOn(platform: GatePlatform, options: GateMiddlewareOptions | undefined): GateCore {
  const resolved = resolveGateOptions(options)
  const client = new SidecarClient(platform.createTransport(resolved), platform.check, resolved.sidecarToken)
  const key = new SidecarKey(resolved.sidecarPublicKey, () => client.live())
  const nonces = new Map<string, string>()
  const checkSignedReceipt = platform.checkReceipt ?? ((receipt: unknown, trustedKeys: readonly string[]) => checkHttpReceipt(receipt, { trustedKeys }))

  async function decide(input: GateRequestInput): Promise<GateOutcome> {
    if (isSkipped(resolved.skip, input.path)) return { allowed: true, headers: {}, gate: null, body: null, rawQuery: null }
    let context: Omit<GateContext, 'verdict' | 'receipt' | 'evidence' | 'executionNonce' | 'failOpen'> | undefined
    let body: Uint8Array | null = null
    let rawQuery: string | null = null
    let answered = false
    try {
      const method = input.method.toUpperCase()
      if (!METHODS.has(method)) throw new UnsupportedMethodError(input.method)
      // `OPTIONS *` or an absolute-form target (`GET http://host/pets`): the framework routes a path it
      // parses out of it, the sidecar would evaluate the text as sent, so the two could disagree on
      // the route (and its policy). Refused, as gate api protect refuses them.
      if (!input.path.startsWith('/')) throw new TargetNotOriginFormError(input.path)
      const parsed = parseQuery(input.rawQuery)
      rawQuery = parsed.strippedRawQuery
      const gateHeaders = readGateHeaders(input.headers, parsed.capability)
      body = await readBody(input.body, input.headers, resolved.maxBodyBytes)
      // decided on this method, so never executed as another (method-override.ts)
      refuseMethodOverride(input.headers, parsed.query, body)
      const caller = await identify(input)
      const request: GateHttpRequest = {
        request_id: uuidv7(),
        method: method as HttpMethod,
        route_pattern: input.routePattern ? toOpenApiPattern(input.routePattern) : input.path,
        path: input.path,
        caller,
        body_hash: body === null ? null : sha256Hex(body),
        body_length: body === null ? 0 : body.length,
        timestamp: Math.floor(Date.now() / 1000),
      }
      if (Object.keys(parsed.query).length > 0) request.query = parsed.query
      const headers = selectForwardHeaders(input.headers, resolved.forwardHeaders)
      if (headers !== undefined) request.headers = headers
      context = { requestId: request.request_id, caller }

      // the key fetch (first request only) runs beside the evaluation instead of after it
      const signerKey = resolved.verifyReceipts === 'local' ? key.get() : undefined
      signerKey?.catch(() => undefined)
      const answer = await client.evaluate(request, gateHeaders)
      answered = true
      await checkReceipt(answer, request, gateHeaders.nonceId, signerKey)
      if (answer.verdict.verdict === 'incomplete' && answer.execution_nonce !== undefined) remember(answer.execution_nonce.nonce_id, answer.receipt.request_id)
      const gate: GateContext = Object.freeze({
        ...context,
        verdict: answer.verdict,
        receipt: answer.receipt,
        evidence: answer.evidence,
        failOpen: null,
        executionNonce: answer.execution_nonce ?? null,
      })
      return toOutcome(answer, gate, body, rawQuery)
    } catch (err) {
      // fail closed: only an explicit onSidecarError 'allow' passes, and only when the sidecar could not be
      // asked at all; once it answered (a deny, say), a failing key fetch or /gate/verify never passes
      if (resolved.onSidecarError === 'allow' && context !== undefined && !answered && isGateError(err) && FAIL_OPEN_CODES.has(err.code)) {
        const gate: GateContext = Object.freeze({ ...context, verdict: null, receipt: null, evidence: [], failOpen: err.code, executionNonce: null })
        return toFailOpenOutcome(err.code, gate, body, rawQuery)
      }
      return toErrorOutcome(err, isGateError(err) && err.code === 'gate_payload_too_large' ? { connection: 'close' } : {})
    }
  }

  async function identify(input: GateRequestInput): Promise<CallerIdentity> {
    if (resolved.identify !== null) {
      let custom: CallerIdentity | null | undefined
      try {
        custom = await resolved.identify(input)
      } catch (err) {
        throw new IdentifyHookError((err as Error)?.message ?? 'it threw', err)
      }
      if (custom !== null && custom !== undefined) {
        const result = platform.check('gate.http.caller_identity.v1', custom)
        if (!result.ok) throw new IdentifyHookError(`it returned an invalid CallerIdentity: ${result.errors.slice(0, 3).join('; ')}`)
        return custom
      }
    }
    return extractCallerIdentity(input.headers, resolved.identityCookie)
  }

  async function checkReceipt(answer: SidecarEvaluation, request: GateHttpRequest, nonceId: string | undefined, signerKey: Promise<string> | undefined): Promise<void> {
    const problem = receiptBindingProblem(answer, { request, nonceId, nonceBoundRequestId: nonceId === undefined ? undefined : nonces.get(nonceId) })
    if (problem !== undefined) throw new InvalidReceiptError(problem)
    if (signerKey !== undefined) {
      const trustedKey = await signerKey
      let check: HttpReceiptCheck
      try {
        check = await checkSignedReceipt(answer.receipt, [trustedKey])
      } catch (err) {
        // a receipt that could not be checked is a receipt that did not verify
        throw new InvalidReceiptError(`it could not be verified (${(err as Error)?.message ?? String(err)})`)
      }
      if (!check.response.ok) throw new InvalidReceiptError(check.failedStep === 'signer' ? 'signed by a key other than the sidecar\'s' : check.detail)
    } else if (resolved.verifyReceipts === 'sidecar') {
      const verified = await client.verify(answer.receipt)
      if (!verified.ok) throw new InvalidReceiptError('the sidecar\'s /gate/verify did not confirm it')
    }
  }

  function remember(nonceId: string, requestId: string): void {
    if (nonces.size >= NONCE_MEMORY_LIMIT) nonces.delete(nonces.keys().next().value as string)
    nonces.set(nonceId, requestId)
  }

  return { decide, close: () => client.close() }
}

function isSkipped(skip: readonly (string | RegExp)[], path: string): boolean {
  for (const s of skip) if (typeof s === 'string' ? s === path : s.test(path)) return true
  return false
}
