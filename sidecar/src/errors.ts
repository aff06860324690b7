// The only place @gate/sidecar's own error classes live. Wire codes come from @gate/sdk's errors.ts;
// helpers writing in this package append their classes in their own delimited section below.
import { GateError } from '@gate/sdk'

export { GateError }

// ---- OpenAPI ----
// OpenApiError lives in @gate/openapi (openapi/src/errors.ts); re-exported for the CLI's commands.
export { OpenApiError, isOpenApiError, OPENAPI_ERROR_KINDS, type OpenApiErrorKind } from '@gate/openapi'

// ---- configuration and startup (config/, cli/) ----

/** A command-line or option problem: exit code 2 (usage), never a stack trace. */
export class UsageError extends GateError {
  constructor(message: string) {
    super('gate_invalid_config', message)
    this.name = 'UsageError'
  }
}

/** Startup refused (spec 01 ProtectError `Config`): durable-receipts gate, bad listen address, seed file. */
export class ConfigError extends GateError {
  constructor(message: string, cause?: unknown) {
    super('gate_invalid_config', message, { cause })
    this.name = 'ConfigError'
  }
}

/** The durable-receipts gate (spec 01): the text says it refuses to start without durable receipts. */
export const DURABLE_RECEIPTS_MESSAGE =
  'refusing to start without durable receipts: pass --receipt-store PATH (or --receipt-db PATH), or --allow-ephemeral-receipts for local development (receipts are then lost on restart)'

// ---- stores ----
// The SQLite stores (stores/). A store that will not open, read or write is gate_store_failed; a receipt
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

// ---- transparency log (transparency/) ----

/** A receipt no checkpoint covers yet (it committed after the newest one): `gate receipt flush` makes one. */
export class NotCheckpointedError extends GateError {
  constructor(receiptId: string, detail: string) {
    super('gate_conflict', `receipt ${receiptId} is not covered by a checkpoint yet: ${detail}`)
    this.name = 'NotCheckpointedError'
  }
}

/** The stored receipts or tree contradict the log (a seq gap, a proof that does not verify): fail closed. */
export class LogIntegrityError extends GateError {
  constructor(detail: string) {
    super('gate_store_failed', `transparency log integrity: ${detail}`)
    this.name = 'LogIntegrityError'
  }
}

/** A flush that did not finish within its timeout. */
export class FlushTimeoutError extends GateError {
  constructor(timeoutMs: number) {
    super('gate_timeout', `receipts were not committed and checkpointed within ${timeoutMs} ms`)
    this.name = 'FlushTimeoutError'
  }
}
