// POST /gate/evaluate (spec 02): 200 with an EvaluateResponse for every verdict; 400 for a body that is
// not a valid GateHttpRequest, a duplicate query key, or a repeated, blank or malformed Gate header
// (readGateHeaders, as the SDK and the proxy read them); 500 when evaluation or the receipt store fails
// (fail closed: no receipt, no answer). A caller may present the control token as a bearer (the SDK's
// `sidecarToken`): only then is a `capability_id` looked up; a wrong one is a 401.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { BadRequestError, ControlAuthError, GateError, readGateHeaders, TargetNotOriginFormError, type GateHttpRequest, type GateRequestHeaders } from '@gate/sdk'
import { CONTROL_UNAUTHORIZED_MESSAGE } from '../http/control-auth.js'
import { getValidator, validate } from '@gate/schemas'
import { context, type Span } from '@opentelemetry/api'
import { markSpanError, parseJsonBody, readBody, sendError, sendJsonText, withServerSpan } from '@gate/sdk/server'
import { recordEvaluation, SpanEvaluationTrace } from '../observability/evaluation-trace.js'
import type { RouteContext } from './context.js'

/** Spec 02, Limits: at most 10 MiB read. */
export const EVALUATE_BODY_LIMIT = 10 * 1024 * 1024

const REQUEST_SCHEMA = 'gate.http.request.v1'

export function createEvaluateRoute(ctx: RouteContext) {
  // compiled now, at startup: compiling on first use put ~190 ms into the first evaluation's answer
  getValidator(REQUEST_SCHEMA)
  const tracer = ctx.tracer
  // decided once here: with tracing off the route is the untraced function itself
  if (tracer === undefined) return (req: IncomingMessage, res: ServerResponse) => evaluate(ctx, req, res, undefined)
  return (req: IncomingMessage, res: ServerResponse) => withServerSpan(tracer, req, res, '/gate/evaluate', span => evaluate(ctx, req, res, { span, steps: new SpanEvaluationTrace(tracer, span, context.active()) }))
}

/** The server span of a traced evaluation and the kernel's steps under it. */
interface EvaluateTrace {
  span: Span
  steps: SpanEvaluationTrace
}

async function evaluate(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, traced: EvaluateTrace | undefined): Promise<void> {
  let request: GateHttpRequest
  let gate: GateRequestHeaders
  const credential = ctx.controlAuth.presented(req)
  try {
    // refused before the body is read: a misconfigured SDK learns it at once
    if (credential === 'invalid') throw new ControlAuthError(401, CONTROL_UNAUTHORIZED_MESSAGE)
    const body = await readBody(req, EVALUATE_BODY_LIMIT)
    request = parseEvaluateBody(body)
    // the query's gate_capability is the kernel's own fallback (kernel.ts), not read here
    gate = readGateHeaders(req.headers, req.rawHeaders)
  } catch (err) {
    return sendError(res, err)
  }
  try {
    const evaluation = await ctx.kernel.evaluate({
      request,
      capabilityHeader: gate.capability,
      approvalId: gate.approvalId,
      nonceId: gate.nonceId,
      authenticated: credential === 'valid',
      trace: traced?.steps,
    })
    if (traced !== undefined) recordEvaluation(traced.span, evaluation)
    sendJsonText(res, 200, evaluation.responseJson, { 'x-gate-receipt-id': evaluation.receipt.id })
  } catch (err) {
    if (traced !== undefined) {
      traced.steps.fail(err)
      markSpanError(traced.span, err)
    }
    sendError(res, err instanceof GateError ? err : new GateError('gate_evaluation_failed', `evaluation failed: ${(err as Error).message}`, { cause: err }))
  }
}

/** Decodes and validates an evaluate body; every failure is gate_bad_request naming the problem. */
export function parseEvaluateBody(body: Buffer): GateHttpRequest {
  // JSON.parse would keep the last of two equal query keys: the reader reports the repeat (spec 02: 400)
  const parsed = parseJsonBody(body, { uniqueMembersIn: 'query' })
  if (!parsed.ok) throw new BadRequestError(parsed.problem)
  const value = parsed.value
  const result = validate(REQUEST_SCHEMA, value)
  if (!result.ok) throw new BadRequestError(`body is not a GateHttpRequest: ${result.errors.slice(0, 5).join('; ')}`)
  if (parsed.duplicateMember !== undefined) throw new BadRequestError(`query key "${parsed.duplicateMember}" appears more than once`)
  // The schema says only "string"; routing and the receipt need an HTTP path (an empty one was a 500
  // when its receipt could not be stored, and "pets" rode the method rule as an unmatched route).
  const path = (value as GateHttpRequest).path
  if (!path.startsWith('/')) throw new TargetNotOriginFormError(path)
  return value as GateHttpRequest
}
