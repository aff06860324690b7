// The only place @gate/sdk's error code strings appear. Codes are the spec's snake_case `gate_*`
// strings (spec 02, Errors); once shipped a code is never renamed or reused for another meaning.

/** Every code this package (and the packages built on it) can raise, with the HTTP status it maps to. */
export const ERROR_STATUS = Object.freeze({
  // sidecar codes (spec 02, Errors)
  gate_bad_request: 400,
  gate_access_denied: 403,
  gate_approval_required: 409,
  gate_evaluation_failed: 500,
  gate_receipt_sign_failed: 500,
  gate_receipt_persistence_failed: 500,
  // SDK-side codes (spec 02, Errors)
  gate_sidecar_unreachable: 503,
  gate_invalid_receipt: 502,
  gate_timeout: 504,
  gate_sidecar_unavailable: 503,
  // internal failures (not on the wire as sidecar answers; statuses are what a service would answer)
  gate_payload_too_large: 413,
  gate_invalid_config: 500,
  gate_invalid_key: 500,
  gate_canonical_json_failed: 500,
  gate_unknown_schema: 400,
  gate_store_failed: 500,
  // a store that cannot be reached right now (trust-control's database): retry later; spec 03, 503
  gate_store_unavailable: 503,
  // a peer's gate.capabilities.v1 envelope is malformed, of an unknown schema, or lacks a feature this
  // side needs (spec 03: fail closed)
  gate_incompatible_peer: 502,
  gate_not_found: 404,
  gate_method_not_allowed: 405,
  gate_unauthorized: 401,
  gate_forbidden: 403,
  gate_conflict: 409,
  // the hosted MCP edge's plain-HTTP refusals (spec 03, Hosted session transport; gate.hosted.error.v1)
  gate_protocol_version_mismatch: 400,
  gate_not_acceptable: 406,
  gate_unsupported_media_type: 415,
  gate_session_not_found: 404,
  gate_session_terminated: 404,
  gate_session_not_ready: 409,
  gate_replay_window_exceeded: 409,
  gate_stream_already_open: 409,
  gate_too_many_sessions: 429,
  gate_capacity_exhausted: 503,
  gate_edge_draining: 503,
  // the native wire (spec 03, Errors): each closes the transport, with no in-band resynchronization
  gate_wire_message_too_large: 413,
  gate_wire_deserialization_failed: 400,
  gate_wire_connection_closed: 502,
} as const)

export type GateErrorCode = keyof typeof ERROR_STATUS

/** The codes a sidecar answers with (spec 02, Errors table). */
export const SIDECAR_ERROR_CODES: readonly GateErrorCode[] = Object.freeze([
  'gate_bad_request',
  'gate_access_denied',
  'gate_approval_required',
  'gate_evaluation_failed',
  'gate_receipt_sign_failed',
  'gate_receipt_persistence_failed',
])

/** The codes an SDK raises (spec 02, "SDK-side error codes"). */
export const SDK_ERROR_CODES: readonly GateErrorCode[] = Object.freeze([
  'gate_access_denied',
  'gate_sidecar_unreachable',
  'gate_evaluation_failed',
  'gate_invalid_receipt',
  'gate_timeout',
  'gate_sidecar_unavailable',
])

/** Codes that may appear in an error body on the wire (gate.http.error_body.v1). Internal codes
 *  (bad config, store failures) are reported as gate_evaluation_failed with their message. */
export const WIRE_ERROR_CODES: ReadonlySet<string> = new Set([
  ...SIDECAR_ERROR_CODES,
  ...SDK_ERROR_CODES,
  'gate_payload_too_large',
  'gate_not_found',
  'gate_method_not_allowed',
  'gate_unauthorized',
  'gate_forbidden',
  'gate_conflict',
])

const BRAND = Symbol.for('gate.error')

/** Base class of every error Gate throws. Branch on `code`, not `instanceof` (two installed copies lie). */
export class GateError extends Error {
  readonly code: GateErrorCode
  readonly status: number
  readonly [BRAND] = true

  constructor(code: GateErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GateError'
    this.code = code
    this.status = options?.status ?? ERROR_STATUS[code]
  }
}

/** True for any Gate error, even one thrown by another installed copy of this package. */
export function isGateError(value: unknown): value is GateError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
}

/** A peer's capability negotiation envelope (spec 03, gate.capabilities.v1) cannot be used: refused, never read in part. */
export class IncompatiblePeerError extends GateError {
  constructor(peer: string, detail: string) {
    super('gate_incompatible_peer', `${peer}: ${detail}`)
    this.name = 'IncompatiblePeerError'
  }
}

/** Input to canonical JSON that RFC 8785 cannot represent (NaN, Infinity, a function, a cycle…). */
export class CanonicalJsonError extends GateError {
  constructor(detail: string) {
    super('gate_canonical_json_failed', `cannot canonicalize: ${detail}`)
    this.name = 'CanonicalJsonError'
  }
}

/** A key or signature string that is not in any supported algorithm form. */
export class InvalidKeyError extends GateError {
  constructor(what: string, detail: string, cause?: unknown) {
    super('gate_invalid_key', `invalid ${what}: ${detail}`, { cause })
    this.name = 'InvalidKeyError'
  }
}

/** Signing refused: the receipt or token body breaks the authority semantics, or the key failed. */
export class SigningError extends GateError {
  constructor(detail: string, cause?: unknown) {
    super('gate_receipt_sign_failed', `signing refused: ${detail}`, { cause })
    this.name = 'SigningError'
  }
}

/** A signed record names a `schema` id this implementation does not know (spec 03: fail closed). */
export class UnknownSchemaError extends GateError {
  constructor(schemaId: string) {
    super('gate_unknown_schema', `unknown schema id "${schemaId}"`)
    this.name = 'UnknownSchemaError'
  }
}

/** A bad option, rejected at construction (never on the first request). */
export class InvalidConfigError extends GateError {
  constructor(option: string, expected: string, got: unknown) {
    super('gate_invalid_config', `${option} must be ${expected}, got ${describe(got)}`)
    this.name = 'InvalidConfigError'
  }
}

/** A request the caller got wrong: bad JSON, duplicate query key, bad header. */
export class BadRequestError extends GateError {
  constructor(detail: string, cause?: unknown) {
    super('gate_bad_request', detail, { cause })
    this.name = 'BadRequestError'
  }
}

/** A body larger than the configured limit. */
export class PayloadTooLargeError extends GateError {
  readonly limitBytes: number
  constructor(limitBytes: number, options?: { status?: number; code?: GateErrorCode }) {
    super(options?.code ?? 'gate_payload_too_large', `request body exceeds the limit of ${limitBytes} bytes`, {
      status: options?.status,
    })
    this.name = 'PayloadTooLargeError'
    this.limitBytes = limitBytes
  }
}

/** A route that does not exist, or an unknown record id. */
export class NotFoundError extends GateError {
  constructor(what: string) {
    super('gate_not_found', `${what} not found`)
    this.name = 'NotFoundError'
  }
}

/** A method the route does not answer. */
export class MethodNotAllowedError extends GateError {
  constructor(method: string, path: string) {
    super('gate_method_not_allowed', `${method} is not allowed on ${path}`)
    this.name = 'MethodNotAllowedError'
  }
}

/** Control-route authentication failures (401 absent or unknown token, 403 not permitted). */
export class ControlAuthError extends GateError {
  constructor(status: 401 | 403, message: string) {
    super(status === 401 ? 'gate_unauthorized' : 'gate_forbidden', message)
    this.name = 'ControlAuthError'
  }
}

/** A request asking for another method than its own (X-HTTP-Method-Override, `_method`): refused, never forwarded. */
export class MethodOverrideError extends BadRequestError {
  constructor(carrier: string) {
    super(`method override (${carrier}) is refused: Gate decides on the request's own method, so send the request with the method it means`)
    this.name = 'MethodOverrideError'
  }
}

/** A state transition that is no longer possible (an approval answered twice, an expired one). */
export class ConflictError extends GateError {
  constructor(message: string) {
    super('gate_conflict', message)
    this.name = 'ConflictError'
  }
}

/** Renders a value for an error message without dumping large or sensitive objects. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)
  if (value === null || value === undefined || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}

// ---- middleware (sdk/src/middleware) ----

/** The sidecar refused or reset the connection (spec 02: `gate_sidecar_unreachable`, 503). */
export class SidecarUnreachableError extends GateError {
  constructor(sidecarUrl: string, cause?: unknown) {
    super('gate_sidecar_unreachable', `the Gate sidecar at ${sidecarUrl} cannot be reached`, { cause })
    this.name = 'SidecarUnreachableError'
  }
}

/** No complete answer within `timeoutMs`, headers and body (spec 02: `gate_timeout`, 504). */
export class SidecarTimeoutError extends GateError {
  readonly timeoutMs: number
  constructor(timeoutMs: number, cause?: unknown) {
    super('gate_timeout', `the Gate sidecar did not answer within ${timeoutMs} ms`, { cause })
    this.name = 'SidecarTimeoutError'
    this.timeoutMs = timeoutMs
  }
}

/**
 * The sidecar answered, but not with a usable EvaluateResponse: a non-200 status, invalid JSON, or a
 * body its schema rejects. Spec 02 names the code; toward the app's client it is a bad gateway (502).
 */
export class EvaluationFailedError extends GateError {
  constructor(detail: string, cause?: unknown) {
    super('gate_evaluation_failed', `the Gate sidecar gave no usable answer: ${detail}`, { cause, status: 502 })
    this.name = 'EvaluationFailedError'
  }
}

/**
 * `verifyReceipts: 'sidecar'` asked /gate/verify and got 408, 404, 429 or a 5xx: the sidecar cannot
 * confirm receipts right now (spec 02: `gate_sidecar_unavailable`, 503). The request is refused.
 */
export class SidecarUnavailableError extends GateError {
  readonly sidecarStatus: number
  constructor(sidecarStatus: number, detail: string) {
    super('gate_sidecar_unavailable', `the Gate sidecar cannot verify receipts right now: /gate/verify answered ${sidecarStatus}${detail}`)
    this.name = 'SidecarUnavailableError'
    this.sidecarStatus = sidecarStatus
  }
}

/** The receipt does not verify or is not bound to the request that was sent (spec 02, 502). */
export class InvalidReceiptError extends GateError {
  constructor(detail: string) {
    super('gate_invalid_receipt', `the sidecar's receipt was rejected: ${detail}`)
    this.name = 'InvalidReceiptError'
  }
}

/** spec 02, Errors: a duplicate query key is a 400 (never guess which value the app will read). */
export class DuplicateQueryKeyError extends BadRequestError {
  readonly key: string
  constructor(key: string) {
    super(`query key "${key}" appears more than once`)
    this.name = 'DuplicateQueryKeyError'
    this.key = key
  }
}

/** A Gate header the client sent in a form Gate cannot pass on unambiguously. */
export class InvalidGateHeaderError extends BadRequestError {
  constructor(header: string, detail: string) {
    super(`header ${header} ${detail}`)
    this.name = 'InvalidGateHeaderError'
  }
}

/**
 * A request target that is not an origin-form path (`*`, `http://host/x`, or no leading slash): what
 * a framework routes would then differ from what the sidecar evaluates, so it is refused as a 400.
 */
export class TargetNotOriginFormError extends BadRequestError {
  constructor(target: string) {
    super(`request target must be an absolute path starting with "/" (origin-form), got ${JSON.stringify(target.slice(0, 60))}`)
    this.name = 'TargetNotOriginFormError'
  }
}

/** A method outside spec 02's HttpMethod list: refused as a bad request with status 405. */
export class UnsupportedMethodError extends GateError {
  constructor(method: string) {
    super('gate_bad_request', `method ${JSON.stringify(method.slice(0, 20))} is not supported by Gate`, { status: 405 })
    this.name = 'UnsupportedMethodError'
  }
}

/**
 * A body parser consumed the request stream before Gate ran and kept no raw bytes. Gate fails closed:
 * re-serializing the parsed body would not reproduce the bytes whose hash the receipt must bind.
 */
export class BodyConsumedError extends GateError {
  constructor() {
    super(
      'gate_evaluation_failed',
      'the request body was consumed by a body parser before Gate ran; register Gate before the parser or keep the raw bytes (see the @gate adapter README)',
      { status: 500 },
    )
    this.name = 'BodyConsumedError'
  }
}

/** The `identify` hook threw or returned something that is not a CallerIdentity. */
export class IdentifyHookError extends GateError {
  constructor(detail: string, cause?: unknown) {
    super('gate_evaluation_failed', `the identify hook failed: ${detail}`, { cause, status: 500 })
    this.name = 'IdentifyHookError'
  }
}

/** An option name this version does not know (STYLE: reject unknown keys at construction). */
export class UnknownOptionError extends GateError {
  constructor(option: string, known: readonly string[]) {
    super('gate_invalid_config', `unknown option "${option}"; known options: ${known.join(', ')}`)
    this.name = 'UnknownOptionError'
  }
}

/** A transparency-log input the tree algorithms refuse: a malformed id, a size or index out of range. */
export class MalformedTreeInputError extends GateError {
  constructor(what: string, expected: string, got: unknown) {
    super('gate_bad_request', `${what} must be ${expected}, got ${describe(got)}`)
    this.name = 'MalformedTreeInputError'
  }
}

/** Codes a fail-open configuration may pass: the sidecar could not be asked (spec 02, Fail-closed rule). */
export const FAIL_OPEN_CODES: ReadonlySet<GateErrorCode> = new Set<GateErrorCode>(['gate_sidecar_unreachable', 'gate_timeout'])

// ---- native wire (sdk/src/wire) ----

/** Why a native wire transport closed (spec 03, Errors). */
export type WireFailureKind = 'message_too_large' | 'deserialization_failed' | 'connection_closed'

const WIRE_CODES = Object.freeze({
  message_too_large: 'gate_wire_message_too_large',
  deserialization_failed: 'gate_wire_deserialization_failed',
  connection_closed: 'gate_wire_connection_closed',
} as const satisfies Record<WireFailureKind, GateErrorCode>)

/**
 * A native wire transport was closed: a frame advertised more than the 16 MiB limit, a payload was not
 * a valid message of the expected family, or the connection ended (mid-frame, or with calls unanswered).
 * A new connection is the only way on (spec 03: no in-band resynchronization).
 */
export class WireProtocolError extends GateError {
  readonly kind: WireFailureKind
  constructor(kind: WireFailureKind, detail: string, cause?: unknown) {
    super(WIRE_CODES[kind], detail, { cause })
    this.name = 'WireProtocolError'
    this.kind = kind
  }
}

/** True for a WireProtocolError, even one from another installed copy of this package. */
export function isWireProtocolError(value: unknown): value is WireProtocolError {
  return isGateError(value) && value.name === 'WireProtocolError' && typeof (value as { kind?: unknown }).kind === 'string'
}
