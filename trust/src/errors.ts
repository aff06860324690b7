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

/** A mutating request on a clustered node without quorum (spec 03, Errors 503): nothing was written. */
export class NoQuorumError extends GateError {
  constructor(detail: string) {
    super('gate_store_unavailable', `no quorum: ${detail}; retry, or send it to a node that has quorum (GET /health)`)
    this.name = 'NoQuorumError'
  }
}

/** The peer-auth scheme of the internal cluster routes (spec 03, Authentication 3). */
export const PEER_AUTH_SCHEME = 'gate.cluster.peer.v1'

/** A peer request refused: 401 (answered with `WWW-Authenticate: gate.cluster.peer.v1`) or 403 (not in the allowlist). */
export class PeerAuthError extends GateError {
  /** The challenge a 401 carries. */
  readonly challenge = PEER_AUTH_SCHEME
  constructor(status: 401 | 403, message: string) {
    super(status === 401 ? 'gate_unauthorized' : 'gate_forbidden', message)
    this.name = 'PeerAuthError'
  }
}
