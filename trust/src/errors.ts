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

/**
 * A request that reached a starting node before its routes were mounted (it listens first: its cluster id
 * is the URL it bound): 503, so a load balancer or a sidecar retries instead of reading a 404 as an answer.
 */
export class ServiceStartingError extends GateError {
  constructor() {
    super('gate_store_unavailable', 'trust-control is starting and does not serve requests yet; retry')
    this.name = 'ServiceStartingError'
  }
}

/** A budget capture that could not commit before its deadline (its sender stops waiting then): nothing was counted. */
export class CaptureDeadlineError extends GateError {
  constructor(detail: string) {
    super('gate_store_unavailable', `budget capture not made within its deadline (${detail}): nothing was counted; retry`)
    this.name = 'CaptureDeadlineError'
  }
}

/** A capture under an id its sender already cancelled: refused, nothing counted. */
export class CaptureCancelledError extends GateError {
  constructor(captureId: string) {
    super('gate_conflict', `budget capture ${captureId} was cancelled by its sender: nothing is counted under that id`)
    this.name = 'CaptureCancelledError'
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

/** Startup refused: a configuration the server cannot run with (exit 1 from the CLI). */
export class TrustConfigError extends GateError {
  constructor(message: string, cause?: unknown) {
    super('gate_invalid_config', message, { cause })
    this.name = 'TrustConfigError'
  }
}

// ---- stores ----
// The errors of the store contract (store-ports.ts), raised alike by the SQLite stores (@gate/sidecar) and
// the PostgreSQL ones (postgres/). A store that will not open, read or write is gate_store_failed; a receipt
// that could not be committed is gate_receipt_persistence_failed (spec 02, Errors), so evaluate fails
// closed with that code. The sqlite3 / node:sqlite error always stays as `cause`.

/** A store that would not open, read or write. */
export class StoreFailedError extends GateError {
  readonly store: string
  readonly path: string

  constructor(store: string, path: string, detail: string, cause?: unknown) {
    super('gate_store_failed', `${store} store ${path}: ${detail}`, { cause })
    this.name = 'StoreFailedError'
    this.store = store
    this.path = path
  }
}

/**
 * A store that cannot be reached right now (trust-control's PostgreSQL database down, restarting or out
 * of connections): 503, and the same request succeeds once it is back. Nothing was written.
 */
export class StoreUnavailableError extends GateError {
  readonly store: string

  constructor(store: string, location: string, detail: string, cause?: unknown) {
    super('gate_store_unavailable', `${store} store ${location} is unavailable: ${detail}`, { cause })
    this.name = 'StoreUnavailableError'
    this.store = store
  }
}

/** A file refused at open: not SQLite, a foreign database, another store's file, or a newer revision. */
export class StoreRevisionError extends GateError {
  readonly path: string
  readonly expectedStore: string
  readonly expectedRevision: number
  readonly found: string

  constructor(details: { path: string; expectedStore: string; expectedRevision: number; found: string }, cause?: unknown) {
    super(
      'gate_store_failed',
      `refusing to open ${details.path} as the Gate ${details.expectedStore} store (revision ${details.expectedRevision}): found ${details.found}`,
      { cause },
    )
    this.name = 'StoreRevisionError'
    this.path = details.path
    this.expectedStore = details.expectedStore
    this.expectedRevision = details.expectedRevision
    this.found = details.found
  }
}

/** A receipt that was not committed; every receipt of a failed group-commit batch gets its own. */
export class ReceiptPersistenceError extends GateError {
  readonly batchSize: number

  constructor(detail: string, options?: { cause?: unknown; batchSize?: number }) {
    super('gate_receipt_persistence_failed', `receipt could not be recorded: ${detail}`, { cause: options?.cause })
    this.name = 'ReceiptPersistenceError'
    this.batchSize = options?.batchSize ?? 1
  }
}

/** A write that reached a store after `close()`. */
export class StoreClosedError extends GateError {
  readonly store: string

  constructor(store: string) {
    super('gate_store_failed', `${store} store is closed`)
    this.name = 'StoreClosedError'
    this.store = store
  }
}

/** A value a store refuses to record (`field` must be `expected`). */
export class StoreInputError extends GateError {
  readonly field: string

  constructor(field: string, expected: string, got: unknown) {
    super('gate_bad_request', `${field} must be ${expected}, got ${describeStoreValue(got)}`)
    this.name = 'StoreInputError'
    this.field = field
  }
}

/** A record id (approval, nonce) that is already taken. */
export class DuplicateRecordError extends GateError {
  readonly store: string
  readonly recordId: string

  constructor(store: string, recordId: string) {
    super('gate_conflict', `${store} record "${recordId}" already exists`)
    this.name = 'DuplicateRecordError'
    this.store = store
    this.recordId = recordId
  }
}

/** An approval answered when it is not pending: unknown (gate_not_found), or already answered or expired (gate_conflict). */
export class ApprovalStateError extends GateError {
  readonly approvalId: string
  readonly state: 'unknown' | 'approved' | 'denied' | 'expired'

  constructor(approvalId: string, state: 'unknown' | 'approved' | 'denied' | 'expired') {
    super(
      state === 'unknown' ? 'gate_not_found' : 'gate_conflict',
      state === 'unknown' ? `approval "${approvalId}" does not exist` : `approval "${approvalId}" is not pending: it is ${state}`,
    )
    this.name = 'ApprovalStateError'
    this.approvalId = approvalId
    this.state = state
  }
}

function describeStoreValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)
  if (value instanceof Uint8Array) return `${value.length} bytes`
  if (value === null || value === undefined || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}
