// The failures the middleware core raises. Codes and default statuses come from ../errors.ts (the only
// table of code strings); these classes add the structured details. Callers branch on `code`.
import { BadRequestError, GateError, type GateErrorCode } from '../errors.js'

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

/** Codes a fail-open configuration may pass: the sidecar could not be asked (spec 02, Fail-closed rule). */
export const FAIL_OPEN_CODES: ReadonlySet<GateErrorCode> = new Set<GateErrorCode>(['gate_sidecar_unreachable', 'gate_timeout'])
