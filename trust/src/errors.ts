// @gate/trust's errors. Trust-control answers with spec 03 bodies (a single `error` string); codes
// still come from @gate/sdk's table.
import { GateError } from '@gate/sdk'

/** A request to a /v1 route that is malformed: bad JSON, wrong types, invalid filters. */
export class TrustRequestError extends GateError {
  constructor(message: string) {
    super('gate_bad_request', message)
    this.name = 'TrustRequestError'
  }
}

/** Query parameters a route does not define (each named). */
export class UnknownQueryParameterError extends GateError {
  readonly names: readonly string[]
  constructor(names: readonly string[]) {
    super('gate_bad_request', `unknown query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}`)
    this.name = 'UnknownQueryParameterError'
    this.names = names
  }
}

/** A query key given more than once. */
export class DuplicateQueryKeyError extends GateError {
  constructor(key: string) {
    super('gate_bad_request', `query key "${key}" appears more than once`)
    this.name = 'DuplicateQueryKeyError'
  }
}

/** A query parameter whose value is not what the route accepts. */
export class InvalidQueryParameterError extends GateError {
  readonly parameter: string
  constructor(parameter: string, expected: string, got: string) {
    super('gate_bad_request', `${parameter} must be ${expected}, got ${JSON.stringify(got.length > 80 ? got.slice(0, 77) + '...' : got)}`)
    this.name = 'InvalidQueryParameterError'
    this.parameter = parameter
  }
}

/** Authority rotation refused: this deployment pins its key (seed file, or the sidecar's signer). */
export class AuthorityPinnedError extends GateError {
  constructor(reason: string) {
    super('gate_conflict', `authority rotation is not available: ${reason}`)
    this.name = 'AuthorityPinnedError'
  }
}

/** A receipt an append route refuses (not a receipt of the route's kind, or a signature that fails). */
export class ReceiptRejectedError extends GateError {
  constructor(kind: string, detail: string) {
    super('gate_bad_request', `${kind} receipt rejected: ${detail}`)
    this.name = 'ReceiptRejectedError'
  }
}
