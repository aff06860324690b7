// The receipt row: what both receipt logs (the SQLite store of @gate/sidecar, postgres/pg-receipt-log.ts)
// store for one signed receipt, how a row is made from the receipt and what the writer knows beside it,
// and the one check of a row both logs apply before they queue it. Every signed receipt is kept byte for
// byte as it was serialized: an HttpReceipt in `httpJson` (its core form, made on read, in `coreJson`),
// or a receipt that only ever had a core form (a tool call's `gate.receipt.v1`) in `coreJson` with
// `httpJson` null.
import { httpReceiptColumns, type CoreReceipt, type HttpReceipt } from '@gate/sdk'
import { ReceiptPersistenceError, StoreInputError } from '../errors.js'
import type { ReceiptOutcome } from '../ports.js'

/** `decision` for an evaluate receipt, `final` for the proxy's finalized receipt of the same request. */
export type ReceiptRowKind = 'decision' | 'final'

/** One receipt to append. Nullable fields may be omitted. */
export interface ReceiptRow {
  /** 64 lowercase hex: the HttpReceipt's `id`. */
  receiptId: string
  /** Unix seconds. */
  timestamp: number
  requestId: string
  /** The HTTP method; `tools/call` for a tool call's receipt. */
  method: string
  /** The route pattern; the tool name for a tool call's receipt. */
  routePattern: string
  /** `http` for HTTP receipts; the tool server id for a tool call's. */
  toolServer: string
  /** `{METHOD} {route_pattern}` for HTTP receipts; the tool name for a tool call's. */
  toolName: string
  outcome: ReceiptOutcome
  capabilityId?: string | null
  tenant?: string | null
  /** The agent subject key of the capability exercised (hex Ed25519). */
  subjectKey?: string | null
  costUnits?: number | null
  costCurrency?: string | null
  attemptedCostUnits?: number | null
  kind: ReceiptRowKind
  decisionReceiptId?: string | null
  /** The signed HttpReceipt exactly as serialized; stored and served unchanged. Null for a core-only receipt. */
  httpJson: string | null
  /**
   * The core receipt form: for an HttpReceipt when known (it is otherwise made when the receipt is first
   * read); for a core-only receipt (httpJson null), the signed receipt itself, required.
   */
  coreJson?: string | null
}

/** A stored receipt row: every field of ReceiptRow, null where it was omitted, and its sequence number. */
export type StoredReceipt = { seq: number } & { [K in keyof ReceiptRow]-?: Exclude<ReceiptRow[K], undefined> }

/** What the caller knows beyond the receipt itself. */
export interface ReceiptRowContext {
  tenant?: string | null
  subjectKey?: string | null
  costUnits?: number | null
  costCurrency?: string | null
  attemptedCostUnits?: number | null
  /** Default: `final` when the receipt's metadata names `gate_decision_receipt_id`, else `decision`. */
  kind?: ReceiptRowKind
  decisionReceiptId?: string | null
  coreJson?: string | null
}

/** One committed batch of appends, as followers see it: the receipt at `firstSeq + i` is `receiptIds[i]`. */
export interface CommittedReceipts {
  firstSeq: number
  lastSeq: number
  receiptIds: readonly string[]
}

/** What a core-only receipt's row needs beyond the receipt: its request id (core receipts carry none). */
export interface CoreReceiptRowContext extends Omit<ReceiptRowContext, 'coreJson'> {
  requestId: string
}

/** The HTTP method column of a tool call's receipt (the MCP method), its route pattern being the tool name. */
export const TOOL_CALL_METHOD = 'tools/call'

const CORE_OUTCOMES: Readonly<Record<string, ReceiptOutcome>> = { allow: 'allow', deny: 'deny', cancelled: 'cancelled', incomplete: 'incomplete' }

/** Builds the row of a receipt that has only a core form; `coreJson` must be the exact bytes signed and served. */
export function createCoreReceiptRow(receipt: CoreReceipt, coreJson: string, context: CoreReceiptRowContext): ReceiptRow {
  const capabilityId = receipt.capability_id === '' ? null : receipt.capability_id
  return {
    receiptId: receipt.id,
    timestamp: receipt.timestamp,
    requestId: context.requestId,
    method: TOOL_CALL_METHOD,
    routePattern: receipt.tool_name,
    toolServer: receipt.tool_server,
    toolName: receipt.tool_name,
    // a receipt without a decision is not a mediated decision; it cannot be stored as an outcome
    outcome: CORE_OUTCOMES[receipt.decision?.verdict ?? ''] ?? ('' as ReceiptOutcome),
    capabilityId,
    tenant: context.tenant ?? null,
    subjectKey: context.subjectKey ?? null,
    costUnits: context.costUnits ?? null,
    costCurrency: context.costCurrency ?? null,
    attemptedCostUnits: context.attemptedCostUnits ?? null,
    kind: context.kind ?? (context.decisionReceiptId === undefined || context.decisionReceiptId === null ? 'decision' : 'final'),
    decisionReceiptId: context.decisionReceiptId ?? null,
    httpJson: null,
    coreJson,
  }
}

/** Builds the row for a signed HttpReceipt; `httpJson` must be the exact bytes that were signed and served. */
export function createReceiptRow(receipt: HttpReceipt, httpJson: string, context: ReceiptRowContext = {}): ReceiptRow {
  const metadataDecisionId = receipt.metadata?.['gate_decision_receipt_id']
  const decisionReceiptId = context.decisionReceiptId ?? (typeof metadataDecisionId === 'string' ? metadataDecisionId : null)
  return {
    ...httpReceiptColumns(receipt),
    tenant: context.tenant ?? null,
    subjectKey: context.subjectKey ?? null,
    costUnits: context.costUnits ?? null,
    costCurrency: context.costCurrency ?? null,
    attemptedCostUnits: context.attemptedCostUnits ?? null,
    kind: context.kind ?? (decisionReceiptId === null ? 'decision' : 'final'),
    decisionReceiptId,
    httpJson,
    coreJson: context.coreJson ?? null,
  }
}

/** The id's first 13 hex digits (52 bits): exact as a JavaScript number, stored as a SQLite INTEGER. */
export function idPrefix(receiptId: string): number {
  return Number.parseInt(receiptId.slice(0, 13), 16)
}

const RECEIPT_HEX = /^[0-9a-f]{64}$/
const OUTCOMES: ReadonlySet<string> = new Set(['allow', 'deny', 'cancelled', 'incomplete'])
const KINDS: ReadonlySet<string> = new Set(['decision', 'final'])

/**
 * The column values of a row in append order (receiptId, idPrefix, then the row's fields; SQLite's
 * appendRows puts seq and id_bucket before them, PostgreSQL skips idPrefix); throws
 * gate_receipt_persistence_failed for a malformed row.
 */
export function rowValues(row: ReceiptRow): unknown[] {
  try {
    if (typeof row !== 'object' || row === null) throw new StoreInputError('receipt row', 'an object', row)
    if (typeof row.receiptId !== 'string' || !RECEIPT_HEX.test(row.receiptId)) {
      throw new StoreInputError('receiptId', '64 lowercase hex characters', row.receiptId)
    }
    if (!Number.isSafeInteger(row.timestamp) || row.timestamp < 0) throw new StoreInputError('timestamp', 'Unix seconds', row.timestamp)
    for (const field of ['requestId', 'method', 'routePattern', 'toolServer', 'toolName'] as const) {
      if (typeof row[field] !== 'string' || row[field] === '') throw new StoreInputError(field, 'a non-empty string', row[field])
    }
    // a row keeps at least one signed form: the HttpReceipt, or (for a core-only receipt) the core one
    const signedForm = row.httpJson === null ? 'coreJson' : 'httpJson'
    const signed = row.httpJson === null ? row.coreJson : row.httpJson
    if (typeof signed !== 'string' || signed === '') throw new StoreInputError(signedForm, 'a non-empty string', signed)
    if (!OUTCOMES.has(row.outcome)) throw new StoreInputError('outcome', 'allow, deny, cancelled or incomplete', row.outcome)
    if (!KINDS.has(row.kind)) throw new StoreInputError('kind', 'decision or final', row.kind)
    return [
      row.receiptId,
      idPrefix(row.receiptId),
      row.timestamp,
      row.requestId,
      row.method,
      row.routePattern,
      row.toolServer,
      row.toolName,
      row.outcome,
      optionalText('capabilityId', row.capabilityId),
      optionalText('tenant', row.tenant),
      optionalText('subjectKey', row.subjectKey),
      optionalUnits('costUnits', row.costUnits),
      optionalText('costCurrency', row.costCurrency),
      optionalUnits('attemptedCostUnits', row.attemptedCostUnits),
      row.kind,
      optionalText('decisionReceiptId', row.decisionReceiptId),
      row.httpJson,
      optionalText('coreJson', row.coreJson),
    ]
  } catch (err) {
    throw new ReceiptPersistenceError(err instanceof Error ? err.message : String(err), { cause: err })
  }
}

function optionalText(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw new StoreInputError(field, 'a string or null', value)
  return value
}

function optionalUnits(field: string, value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null
  if (!Number.isSafeInteger(value) || value < 0) throw new StoreInputError(field, 'a non-negative integer or null', value)
  return value
}
