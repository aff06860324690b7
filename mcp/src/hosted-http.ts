// The HTTP pieces of the hosted edge that come before the SDK transport: the answers it gives itself
// (gate.hosted.error.v1 bodies with the spec's statuses; JSON-RPC errors for an accepted message), the
// request checks (Accept, Content-Type) and a body read with a byte limit. Host and Origin are checked
// before routing (rebinding-guard.ts).
import type { IncomingMessage, ServerResponse } from 'node:http'

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

/** The codes of `gate.hosted.error.v1` the edge answers with, and whether a later retry may succeed. */
const HOSTED_ERRORS = {
  gate_bad_request: { transient: false, retry: 'fix the request; sending it unchanged fails again' },
  gate_protocol_version_mismatch: { transient: false, retry: 'send the MCP-Protocol-Version the session was initialized with, or initialize a new session' },
  gate_unauthorized: { transient: false, retry: 'send a valid admission bearer token or JWT' },
  gate_forbidden: { transient: false, retry: 'send the request from an allowed Origin and Host' },
  gate_session_not_found: { transient: false, retry: 'initialize a new session' },
  gate_session_terminated: { transient: false, retry: 'the session ended: initialize a new session' },
  gate_session_not_ready: { transient: true, retry: 'send notifications/initialized, then repeat the request' },
  gate_not_acceptable: { transient: false, retry: 'list application/json and text/event-stream in Accept (text/event-stream for GET)' },
  gate_replay_window_exceeded: { transient: false, retry: 'the missed events are gone: initialize a new session' },
  gate_stream_already_open: { transient: true, retry: 'close the open stream first, or reconnect with Last-Event-ID once it has closed' },
  gate_payload_too_large: { transient: false, retry: 'send a smaller message' },
  gate_unsupported_media_type: { transient: false, retry: 'send Content-Type: application/json' },
  gate_capacity_exhausted: { transient: true, retry: 'retry after the Retry-After delay' },
  gate_too_many_sessions: { transient: true, retry: 'end one of your sessions (DELETE /mcp), or retry after the Retry-After delay, when your oldest idle session expires' },
  gate_edge_draining: { transient: true, retry: 'retry against the next edge; the session resumes there' },
} as const

/** A code of `gate.hosted.error.v1` that the edge sends. */
export type HostedErrorCode = keyof typeof HOSTED_ERRORS

/**
 * A plain-HTTP failure of the hosted edge, in the `gate.hosted.error.v1` body (the code under `error`,
 * as on every Gate service). Failures of a JSON-RPC message the edge accepted stay JSON-RPC errors.
 */
export function sendHostedError(res: ServerResponse, status: number, code: HostedErrorCode, message: string, headers: Record<string, string> = {}, retryGuidance?: string): void {
  if (res.headersSent) return void res.end()
  const { transient } = HOSTED_ERRORS[code]
  const retry = retryGuidance ?? HOSTED_ERRORS[code].retry
  const body = JSON.stringify({ error: code, message, transient, retry_guidance: retry })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

/**
 * spec 03's 401 (`www-authenticate: Bearer`, the same answer for absent and unknown tokens; with OAuth
 * the challenge names the protected-resource metadata), or 403 for an access token without a required
 * scope (RFC 6750 §3.1 insufficient_scope).
 */
export function sendUnauthorized(res: ServerResponse, refusal: { status: 401 | 403; reason: string; challenge: string }): void {
  if (refusal.status === 403) return sendHostedError(res, 403, 'gate_forbidden', `Forbidden: ${refusal.reason}`, { 'www-authenticate': refusal.challenge }, 'obtain an access token with the scopes named in WWW-Authenticate')
  sendHostedError(res, 401, 'gate_unauthorized', 'missing or invalid bearer token: a session needs an admission token, JWT or OAuth access token', { 'www-authenticate': refusal.challenge })
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

export type BodyRead = { ok: true; value: unknown } | { ok: false; status: 413 | 400; message: string }

/** Reads and parses the body; stops reading past `maxBytes` (a declared length over it is refused unread). */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const tooLarge = { ok: false as const, status: 413 as const, message: `Payload Too Large: the body must not exceed ${maxBytes} bytes` }
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
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON' }
  }
}
