// The only place @gate/mcp's error classes live; wire codes and their statuses come from @gate/sdk's
// errors.ts. A tool server that fails after a call was allowed is reported to the agent as an `isError`
// result with the final receipt (docs/mcp.md); ToolServerError is what that path and a library caller
// branch on (by `kind`). The hosted edge's plain-HTTP refusals (gate.hosted.error.v1) are the
// HostedEdgeError classes at the end: hosted-http.ts turns one into its body.
import { GateError, type GateErrorCode } from '@gate/sdk'

/** How a tool server failed: its child exited, it broke the protocol, it timed out, or an upstream failed. */
export type ToolServerFailureKind = 'exited' | 'protocol' | 'timeout' | 'upstream' | 'cancelled'

/** A tool server could not complete a call (or could not start). */
export class ToolServerError extends GateError {
  readonly kind: ToolServerFailureKind

  constructor(kind: ToolServerFailureKind, message: string, cause?: unknown) {
    super('gate_evaluation_failed', message, { cause, status: 502 })
    this.name = 'ToolServerError'
    this.kind = kind
  }
}

/** Bad configuration of the MCP edge or a tool server (an option, a spec, a command). */
export class McpConfigError extends GateError {
  constructor(message: string, cause?: unknown) {
    super('gate_invalid_config', message, { cause })
    this.name = 'McpConfigError'
  }
}

/** True for a ToolServerError, even one from another installed copy of this package. */
export function isToolServerError(value: unknown): value is ToolServerError {
  return value instanceof Error && value.name === 'ToolServerError' && typeof (value as { kind?: unknown }).kind === 'string'
}

// ---- the hosted edge's plain-HTTP refusals (spec 03, Hosted session transport) ----

/** Whether a later retry of a refused request may succeed, and what to do (`transient`, `retry_guidance`). */
const HOSTED_RETRY = {
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
} as const satisfies Partial<Record<GateErrorCode, { transient: boolean; retry: string }>>

/** A code of `gate.hosted.error.v1` that the edge answers with. */
export type HostedErrorCode = keyof typeof HOSTED_RETRY

/** Every code the edge answers with (the schema's enum lists them; a test checks). */
export const HOSTED_ERROR_CODES: readonly HostedErrorCode[] = Object.freeze(Object.keys(HOSTED_RETRY) as HostedErrorCode[])

/** A request the hosted edge refuses before its MCP transport reads it (a gate.hosted.error.v1 answer). */
export class HostedEdgeError extends GateError {
  declare readonly code: HostedErrorCode
  /** True when the same request may succeed later. */
  readonly transient: boolean
  readonly retryGuidance: string
  /** Headers the answer carries (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Readonly<Record<string, string>>

  constructor(code: HostedErrorCode, message: string, options: { status?: number; headers?: Record<string, string>; retryGuidance?: string } = {}) {
    super(code, message, { status: options.status })
    this.name = 'HostedEdgeError'
    this.transient = HOSTED_RETRY[code].transient
    this.retryGuidance = options.retryGuidance ?? HOSTED_RETRY[code].retry
    this.headers = Object.freeze({ ...options.headers })
  }
}

/** A malformed request: 400. */
export class HostedBadRequestError extends HostedEdgeError {
  constructor(detail: string) {
    super('gate_bad_request', detail)
    this.name = 'HostedBadRequestError'
  }
}

/** A method other than POST, GET and DELETE: 405 with Allow (spec 03 keeps gate_bad_request). */
export class HostedMethodNotAllowedError extends HostedEdgeError {
  constructor() {
    super('gate_bad_request', 'Method not allowed: POST, GET or DELETE', { status: 405, headers: { allow: 'GET, POST, DELETE' } })
    this.name = 'HostedMethodNotAllowedError'
  }
}

/** Absent or unknown admission credentials: 401, the same answer for both; with OAuth the challenge names the resource metadata. */
export class HostedUnauthorizedError extends HostedEdgeError {
  constructor(challenge = 'Bearer') {
    super('gate_unauthorized', 'missing or invalid bearer token: a session needs an admission token, JWT or OAuth access token', { headers: { 'www-authenticate': challenge } })
    this.name = 'HostedUnauthorizedError'
  }
}

/** An OAuth access token without a scope the edge requires: 403 (RFC 6750 §3.1 insufficient_scope). */
export class InsufficientScopeError extends HostedEdgeError {
  constructor(reason: string, challenge: string) {
    super('gate_forbidden', `Forbidden: ${reason}`, { headers: { 'www-authenticate': challenge }, retryGuidance: 'obtain an access token with the scopes named in WWW-Authenticate' })
    this.name = 'InsufficientScopeError'
  }
}

/** A foreign Host or Origin (DNS rebinding, @gate/sdk/server rebinding-guard.ts): 403. */
export class HostedForbiddenError extends HostedEdgeError {
  constructor(refusal: string) {
    super('gate_forbidden', `Forbidden: ${refusal}`)
    this.name = 'HostedForbiddenError'
  }
}

/** A body over the edge's limit: 413. */
export class HostedPayloadTooLargeError extends HostedEdgeError {
  constructor(maxBytes: number) {
    super('gate_payload_too_large', `Payload Too Large: the body must not exceed ${maxBytes} bytes`)
    this.name = 'HostedPayloadTooLargeError'
  }
}

/** An Accept header without what the method answers with: 406. */
export class NotAcceptableError extends HostedEdgeError {
  constructor(required: 'both application/json and text/event-stream' | 'text/event-stream') {
    super('gate_not_acceptable', `Not Acceptable: Accept must list ${required}`)
    this.name = 'NotAcceptableError'
  }
}

/** A POST body that is not declared JSON: 415. */
export class UnsupportedMediaTypeError extends HostedEdgeError {
  constructor() {
    super('gate_unsupported_media_type', 'Unsupported Media Type: Content-Type must be application/json')
    this.name = 'UnsupportedMediaTypeError'
  }
}

/** A ready-state request before `notifications/initialized`: 409. */
export class SessionNotReadyError extends HostedEdgeError {
  constructor(method: string) {
    super('gate_session_not_ready', `${method} waits for notifications/initialized`)
    this.name = 'SessionNotReadyError'
  }
}

/** An MCP-Session-Id this edge does not know: 404. */
export class SessionNotFoundError extends HostedEdgeError {
  constructor() {
    super('gate_session_not_found', 'Session not found: initialize a new session')
    this.name = 'SessionNotFoundError'
  }
}

/** A session that ended (deleted, expired, closed, or draining elsewhere): 404, never a silent resume. */
export class SessionTerminatedError extends HostedEdgeError {
  constructor(why: string) {
    super('gate_session_terminated', `${why}: initialize a new session`)
    this.name = 'SessionTerminatedError'
  }
}

/** An MCP-Protocol-Version other than the session's: 400. */
export class ProtocolVersionMismatchError extends HostedEdgeError {
  constructor(supplied: string, bound: string) {
    super('gate_protocol_version_mismatch', `Bad Request: MCP-Protocol-Version ${supplied} differs from the session's ${bound}`)
    this.name = 'ProtocolVersionMismatchError'
  }
}

/** A Last-Event-ID outside the retained window (or of another session): 409. */
export class ReplayWindowExceededError extends HostedEdgeError {
  constructor(lastEventId: string, why: string) {
    super('gate_replay_window_exceeded', `Conflict: Last-Event-ID ${lastEventId} ${why}; initialize a new session to start over`)
    this.name = 'ReplayWindowExceededError'
  }
}

/** A second GET stream for one session: 409. */
export class StreamAlreadyOpenError extends HostedEdgeError {
  constructor() {
    super('gate_stream_already_open', 'Conflict: this session already has its GET stream open (one per session)')
    this.name = 'StreamAlreadyOpenError'
  }
}

/** The edge's session or stream cap is reached: 503 with Retry-After. */
export class CapacityExhaustedError extends HostedEdgeError {
  constructor(what: 'sessions' | 'streams', cap: number) {
    super('gate_capacity_exhausted', `Service Unavailable: ${cap} ${what} are open (the ${what === 'sessions' ? 'session' : 'stream'} cap)`, { headers: { 'retry-after': '1' } })
    this.name = 'CapacityExhaustedError'
  }
}

/** One caller's session cap is reached: 429, retry when its oldest idle session expires. */
export class TooManySessionsError extends HostedEdgeError {
  constructor(cap: number, retryAfterSeconds: number) {
    super('gate_too_many_sessions', `Too Many Requests: this caller has ${cap} sessions open (the per-caller cap); end one with DELETE /mcp`, { headers: { 'retry-after': String(retryAfterSeconds) } })
    this.name = 'TooManySessionsError'
  }
}

/** The edge is draining for a stop: 503, retry against the next edge, where the session resumes. */
export class EdgeDrainingError extends HostedEdgeError {
  constructor() {
    super('gate_edge_draining', 'Service Unavailable: this edge is draining; retry against the next one (your session resumes there)', { headers: { 'retry-after': '1' } })
    this.name = 'EdgeDrainingError'
  }
}
