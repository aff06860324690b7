// The reverse proxy of `gate api protect` (spec 01, "Proxy traffic"): the handler for every request
// that is not a Gate route. Per request: check method, target and Gate headers; read the body (10 MiB);
// build the GateHttpRequest; evaluate in-process (decision receipt stored); act on the verdict; sign
// and store the finalized receipt with the answered status; answer.
//
// Finalize ordering: the finalized receipt is stored BEFORE the response starts. For a forwarded
// request that is the moment the upstream's status line and headers arrive: the receipt is finalized
// with that status, its id goes into X-Gate-Receipt-Id, and only then is the body relayed, streaming.
// So every id a client sees names a receipt already durable, and the status it records is the one the
// client got. A body that later fails mid-stream (upstream reset, timeout) ends the client connection
// abruptly; its receipt keeps the status that was sent.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { buildGateHttpRequest, HTTP_METHODS, readGateHeaders, refuseMethodOverride, type HttpMethod } from '@gate/sdk'
import { nameServerSpan, readBody, sendError, withServerSpan } from '@gate/sdk/server'
import type { Span } from '@opentelemetry/api'
import { extractCallerIdentity } from './caller-identity.js'
import { ProtectError } from './errors.js'
import { forwardedHeaders, selectRequestHeaders, selectResponseHeaders } from './forward-headers.js'
import { resolveProxyOptions, type ProxyOptions, type ResolvedProxyOptions } from './options.js'
import type { ProxyEvaluation, ProxyEvaluator, ProxyRoute, ProxyWiring } from './ports.js'
import {
  RECEIPT_ID_HEADER,
  sendApprovalRequired,
  sendDenial,
  sendEvaluateResponse,
  sendEvaluationFailure,
  sendMethodNotAllowed,
  sendUpstreamFailure,
} from './proxy-answers.js'
import { startUpstreamSpan } from './proxy-tracing.js'
import { parseRequestTarget } from './request-target.js'
import { UpstreamClient, type RelayOutcome } from './upstream-client.js'
import type { UpstreamTarget } from './upstream-url.js'

const METHODS: ReadonlySet<string> = new Set(HTTP_METHODS)
const EMPTY = Buffer.alloc(0)

function hasNoBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined
}

export interface GateProxy {
  /**
   * The request handler (a sidecar FallbackHandler). Resolves once the answer is written, with the route
   * pattern the request matched (undefined when none did, or it was refused before evaluation): the
   * metrics label, so nothing has to match the path again.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<string | undefined>
  readonly upstream: UpstreamTarget
  readonly options: ResolvedProxyOptions
  /** Closes the upstream connection pool. */
  close(): Promise<void>
}

/** Creates the proxy in front of `options.upstream`, evaluating every request with `evaluator`. */
export function createProxy<E extends ProxyEvaluation, R extends ProxyRoute = ProxyRoute>(evaluator: ProxyEvaluator<E, R>, options: ProxyOptions, wiring: ProxyWiring = {}): GateProxy {
  const resolved = resolveProxyOptions(options)
  const client = wiring.upstream ?? new UpstreamClient(resolved)
  const { basePath } = resolved.upstream
  const maxBodyBytes = resolved.maxBodyBytes
  const tracer = wiring.tracer

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
    const route = tracer === undefined ? await answer(req, res, undefined) : await withServerSpan(tracer, req, res, undefined, span => answer(req, res, span))
    return route?.matched === true ? route.pattern : undefined
  }

  // the route is matched once, here, and handed to the evaluator with the request
  async function answer(req: IncomingMessage, res: ServerResponse, span: Span | undefined): Promise<R | undefined> {
    const method = req.method as HttpMethod
    if (!METHODS.has(method)) {
      sendMethodNotAllowed(res)
      return undefined
    }

    let target, gate, body: Buffer
    try {
      target = parseRequestTarget(req.url ?? '/')
      gate = readGateHeaders(req.headers, req.rawHeaders, target.capability)
      // a request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3)
      body = hasNoBody(req) ? EMPTY : await readBody(req, maxBodyBytes)
      // the upstream must run the method Gate decided on (sdk method-override.ts)
      refuseMethodOverride(req.headers, target.query, body)
    } catch (err) {
      // spec 01, Limits: an oversized body answers 400 (gate_bad_request), not 413; readBody drops the
      // rest of it so the client can read the answer (or sendError closes when it is too large for that)
      sendError(res, err)
      return undefined
    }

    let evaluation: E
    let route: R | undefined
    try {
      route = evaluator.matchRoute(method, target.path)
      // an unmatched path is raw request data: the span keeps the method alone (low cardinality)
      if (span !== undefined && route.matched !== false) nameServerSpan(span, method, route.pattern)
      const request = buildGateHttpRequest({
        method,
        path: target.path,
        routePattern: route.pattern,
        caller: extractCallerIdentity(req.headers),
        body,
        query: target.query,
      })
      evaluation = await evaluator.evaluate({ request, route, capabilityHeader: gate.capability, approvalId: gate.approvalId, nonceId: gate.nonceId })
    } catch (err) {
      // no verdict, no forwarding (fail closed)
      sendEvaluationFailure(res, err)
      return route
    }

    const { verdict } = evaluation
    if (verdict.verdict === 'allow') {
      await forward(req, res, evaluation, `${basePath}${target.path}${target.forwardSearch}`, body)
      return route
    }
    // not forwarded: the answered status is the outcome's status (409 pending approval, 403 deny,
    // 428 incomplete, 500 cancel); the finalized receipt records it before the answer goes out
    const finalId = await finalizeOrFail(res, evaluation, evaluation.status)
    if (finalId === undefined) return route
    switch (verdict.verdict) {
      case 'deny':
        if (evaluation.approval !== undefined || verdict.http_status === 409) {
          sendApprovalRequired(res, verdict.reason, { decisionReceiptId: evaluation.receipt.id, finalReceiptId: finalId }, evaluation.approval)
        } else {
          sendDenial(res, verdict, finalId)
        }
        break
      case 'incomplete':
        sendEvaluateResponse(res, 428, evaluation.responseJson, finalId)
        break
      case 'cancel':
        sendEvaluateResponse(res, 500, evaluation.responseJson, finalId)
        break
    }
    return route
  }

  /** Finalizes with `status`; on failure answers 500 (naming the stored decision receipt) and returns undefined. */
  async function finalizeOrFail(res: ServerResponse, evaluation: E, status: number): Promise<string | undefined> {
    try {
      return (await evaluator.finalize(evaluation, status)).receipt.id
    } catch (err) {
      sendEvaluationFailure(res, err, evaluation.receipt.id)
      return undefined
    }
  }

  async function forward(req: IncomingMessage, res: ServerResponse, evaluation: E, path: string, body: Buffer): Promise<void> {
    const headers = selectRequestHeaders(req.rawHeaders, req.headers.connection)
    headers.push(...forwardedHeaders(req))
    const request = { method: req.method as string, path, headers, body: body.length > 0 ? body : null }
    const hop = tracer === undefined ? undefined : startUpstreamSpan(tracer, resolved.upstream, request.method, path, headers)
    const outcome = await relayOrFail(request, res, async (statusCode, upstreamHeaders) => {
      hop?.head(statusCode)
      let finalId: string
      try {
        finalId = (await evaluator.finalize(evaluation, statusCode)).receipt.id
      } catch (err) {
        // the upstream answered but its receipt cannot be recorded: its answer is not relayed
        sendEvaluationFailure(res, err, evaluation.receipt.id)
        throw err
      }
      const headers = selectResponseHeaders(upstreamHeaders)
      headers[RECEIPT_ID_HEADER] = finalId
      try {
        res.writeHead(statusCode, headers)
      } catch (err) {
        // a header value node refuses to write (e.g. a control character): nothing was sent yet
        sendUpstreamFailure(res, new ProtectError('Upstream', `upstream response headers cannot be relayed: ${(err as Error).message}`, err), finalId)
        throw err
      }
    })
    hop?.end(outcome)
    if (outcome.kind === 'failed') {
      // spec 01: connection failure or a request that cannot be built → 502; the receipt keeps the
      // allow verdict with response_status 502 (a wall-clock timeout before the head counts the same)
      const finalId = await finalizeOrFail(res, evaluation, 502)
      if (finalId !== undefined) sendUpstreamFailure(res, outcome.error, finalId)
    }
  }

  /**
   * The last resort: the relay never rejects by contract, but one that throws (a bug, or the HTTP
   * client failing in a way nothing expected) must cost this request a 502, never the process.
   */
  async function relayOrFail(...args: Parameters<UpstreamClient['relay']>): Promise<RelayOutcome> {
    const [, res] = args
    try {
      return await client.relay(...args)
    } catch (err) {
      wiring.onUnexpectedError?.(err)
      const error = new ProtectError('Upstream', `upstream relay failed: ${err instanceof Error ? err.message : String(err)}`, err)
      // an answer already started cannot become a 502: cut it (its receipt keeps the status sent)
      if (res.headersSent) {
        res.destroy(error)
        return { kind: 'cut', error }
      }
      return { kind: 'failed', error }
    }
  }

  return {
    handle,
    upstream: resolved.upstream,
    options: resolved,
    close: () => client.close(),
  }
}
