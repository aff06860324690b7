// Writing answers for Gate's own HTTP services (sidecar, proxy, trust-control). `sendError` is the one
// place a GateError becomes the spec 02 error body (STYLE: routes never assemble error bodies by hand);
// `sendTrustError` is the spec 03 form (a single `error` string) for the /v1 routes.
import type { ServerResponse } from 'node:http'
import { isGateError, WIRE_ERROR_CODES } from '../errors.js'
import type { GateErrorBody } from '../types.js'
import { BodyTooLargeError } from './read-body.js'
import { BodyBudgetExceededError } from './body-budget.js'

const JSON_TYPE = 'application/json'

/** Sends already-serialized JSON. */
export function sendJsonText(res: ServerResponse, status: number, json: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.statusCode = status
  res.setHeader('content-type', JSON_TYPE)
  res.setHeader('content-length', Buffer.byteLength(json))
  if (headers !== undefined) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  res.end(json)
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  sendJsonText(res, status, JSON.stringify(value), headers)
}

/** The spec's structured error body for any thrown value; unknown errors become gate_evaluation_failed. */
export function errorBody(err: unknown, extra?: Partial<GateErrorBody>): { status: number; body: GateErrorBody } {
  if (isGateError(err)) {
    const code = WIRE_ERROR_CODES.has(err.code) ? err.code : 'gate_evaluation_failed'
    return { status: err.status, body: { error: code, message: err.message, receipt_id: null, suggestion: suggestionFor(code), ...extra } }
  }
  const message = err instanceof Error ? err.message : 'evaluation failed'
  return { status: 500, body: { error: 'gate_evaluation_failed', message, receipt_id: null, suggestion: null, ...extra } }
}

export function sendError(res: ServerResponse, err: unknown, options: { extra?: Partial<GateErrorBody> } = {}): void {
  const { status, body } = errorBody(err, options.extra)
  const headers: Record<string, string> = {}
  if (typeof body.receipt_id === 'string') headers['x-gate-receipt-id'] = body.receipt_id
  if (mustClose(err)) headers.connection = 'close'
  if (err instanceof BodyBudgetExceededError) headers['retry-after'] = '1'
  if (status === 401) headers['www-authenticate'] = 'Bearer'
  sendJsonText(res, status, JSON.stringify(body), headers)
}

// A body too large to drain is left unread: the connection cannot carry another request.
function mustClose(err: unknown): boolean {
  return err instanceof BodyTooLargeError && !err.draining
}

function suggestionFor(code: string): string | null {
  switch (code) {
    case 'gate_bad_request':
      return 'fix the request as the message describes and send it again'
    case 'gate_receipt_persistence_failed':
      return 'the receipt store is failing; check /gate/health and the sidecar logs'
    default:
      return null
  }
}

/** Spec 03 error body for /v1 routes: one `error` string, no nested code (401 adds WWW-Authenticate). */
export function sendTrustError(res: ServerResponse, err: unknown): void {
  const status = isGateError(err) ? err.status : 500
  const message = err instanceof Error ? err.message : 'internal error'
  const headers: Record<string, string> = {}
  // a 401 names the scheme to answer with: Bearer, or the error's own (the cluster peer scheme, spec 03)
  if (status === 401) headers['www-authenticate'] = challengeOf(err) ?? 'Bearer'
  if (mustClose(err)) headers.connection = 'close'
  if (err instanceof BodyBudgetExceededError) headers['retry-after'] = '1'
  sendJsonText(res, status, JSON.stringify({ error: message }), headers)
}

function challengeOf(err: unknown): string | undefined {
  const challenge = typeof err === 'object' && err !== null ? (err as { challenge?: unknown }).challenge : undefined
  return typeof challenge === 'string' ? challenge : undefined
}
