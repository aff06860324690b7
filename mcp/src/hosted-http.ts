// The HTTP pieces of the hosted edge that come before the SDK transport: the answers it gives itself
// (gate.hosted.error.v1 bodies with the spec's statuses; JSON-RPC errors for an accepted message), the
// request checks (Accept, Content-Type) and a body read with a byte limit. Host and Origin are checked
// before routing (@gate/sdk/server rebinding-guard.ts).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HostedBadRequestError, HostedPayloadTooLargeError, HostedUnauthorizedError, InsufficientScopeError, type HostedEdgeError } from './errors.js'

/** The one protocol version the hosted edge speaks (spec 03, Versioning): exact match, no downgrade. */
export const HOSTED_PROTOCOL_VERSION = '2025-11-25'

/** spec 03's native incompatible-peer code, carried in `error.data.gateError` of a refused initialize. */
export const GATE_INCOMPATIBLE_PEER = 1000

export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  options: { id?: string | number | null; data?: unknown; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent) return void res.end()
  const error: Record<string, unknown> = { code, message }
  if (options.data !== undefined) error.data = options.data
  const body = JSON.stringify({ jsonrpc: '2.0', id: options.id ?? null, error })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers })
  res.end(body)
}

/**
 * A plain-HTTP refusal of the hosted edge, in the `gate.hosted.error.v1` body (the code under `error`, as
 * on every Gate service), with the error's status and headers. The one place these bodies are made;
 * failures of a JSON-RPC message the edge accepted stay JSON-RPC errors.
 */
export function sendHostedError(res: ServerResponse, err: HostedEdgeError): void {
  if (res.headersSent) return void res.end()
  const body = JSON.stringify(hostedErrorBody(err))
  res.writeHead(err.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...err.headers })
  res.end(body)
}

/** The `gate.hosted.error.v1` body of a refusal. */
export function hostedErrorBody(err: HostedEdgeError): { error: string; message: string; transient: boolean; retry_guidance: string } {
  return { error: err.code, message: err.message, transient: err.transient, retry_guidance: err.retryGuidance }
}

/**
 * spec 03's 401 (`www-authenticate: Bearer`, the same answer for absent and unknown tokens; with OAuth
 * the challenge names the protected-resource metadata), or 403 for an access token without a required
 * scope (RFC 6750 §3.1 insufficient_scope).
 */
export function sendUnauthorized(res: ServerResponse, refusal: { status: 401 | 403; reason: string; challenge: string }): void {
  sendHostedError(res, refusal.status === 403 ? new InsufficientScopeError(refusal.reason, refusal.challenge) : new HostedUnauthorizedError(refusal.challenge))
}

export function acceptsPost(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('application/json') && accept.includes('text/event-stream')
}

export function acceptsStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream')
}

export function isJsonContentType(req: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')
}

export type BodyRead = { ok: true; value: unknown } | { ok: false; error: HostedEdgeError }

/** Reads and parses the body; stops reading past `maxBytes` (a declared length over it is refused unread). */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const tooLarge = { ok: false as const, error: new HostedPayloadTooLargeError(maxBytes) }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
    req.resume()
    return tooLarge
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      req.resume()
      return tooLarge
    }
    chunks.push(chunk as Buffer)
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) }
  } catch {
    return { ok: false, error: new HostedBadRequestError('Parse error: the body is not JSON') }
  }
}
