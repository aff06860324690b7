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
  gate_not_found: 404,
  gate_method_not_allowed: 405,
  gate_unauthorized: 401,
  gate_forbidden: 403,
  gate_conflict: 409,
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
