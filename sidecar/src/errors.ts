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

// ---- listeners (http/) ----

/** A request to Gate's own routes with a Host or Origin this listener does not serve (DNS rebinding): 403. */
export class ForeignHostError extends GateError {
  constructor(message: string) {
    super('gate_forbidden', message)
    this.name = 'ForeignHostError'
  }
}

// ---- stores ----
// The store errors both backends raise (SQLite here, PostgreSQL in @gate/trust) are part of the store
// contract, declared beside the store ports in @gate/trust; re-exported for the sidecar's own stores.
export {
  ApprovalStateError,
  DuplicateRecordError,
  ReceiptPersistenceError,
  StoreClosedError,
  StoreFailedError,
  StoreInputError,
  StoreRevisionError,
  StoreUnavailableError,
} from '@gate/trust'

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
