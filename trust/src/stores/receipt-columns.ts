// The receipt log's filter columns and the signed receipt they are read from. Queries filter on the
// columns (outcome, capability, subject, tool or route, time, cost, tenant, decision link), so every
// column must be a function of the signed bytes of its row: then `gate receipt audit` can recompute
// each one and call a row whose columns disagree with its receipt altered, even when the receipt is
// untouched. Two columns came only from the writer's context, the caller's tenant and the capability's
// agent subject; the writer signs them into the receipt (@gate/sidecar's `bindReceiptContext`, the only
// path into the log), as `metadata.gate_tenant` and `metadata.gate_subject_key` (a core receipt carries
// its tenant in `tenant_id`). Both backends select audited rows with the same columns.
//
// Derived from the signed body:
//   timestamp, request_id, method, route_pattern, tool_server, tool_name, outcome, capability_id:
//     the receipt's own fields (http-receipt.ts `httpReceiptColumns`, receipt-row.ts `createCoreReceiptRow`)
//   tenant, subject_key: the bound metadata (null when absent)
//   cost_units, cost_currency, attempted_cost_units: `metadata.financial` of a decision; a finalized
//     receipt repeats its decision's financial metadata, but the charge is filed once, on the decision
//   kind, decision_receipt_id: `final` for the proxy's finalized receipt (`gate_http_status_scope`)
//     and a tool call's final receipt; `metadata.gate_decision_receipt_id`
import { httpReceiptColumns, type CoreReceipt, type HttpReceipt } from '@gate/sdk'
import type { ReceiptRowKind, StoredReceipt } from './receipt-row.js'

/** The signed metadata key of the caller's tenant (HTTP receipts; core receipts use `tenant_id`). */
export const TENANT_METADATA_KEY = 'gate_tenant'
/** The signed metadata key of the agent subject key of the capability exercised. */
export const SUBJECT_METADATA_KEY = 'gate_subject_key'

/** The columns of a row that are read off its signed receipt (the audit compares each). */
export type SignedColumns = Pick<
  StoredReceipt,
  | 'timestamp'
  | 'requestId'
  | 'method'
  | 'routePattern'
  | 'toolServer'
  | 'toolName'
  | 'outcome'
  | 'capabilityId'
  | 'tenant'
  | 'subjectKey'
  | 'costUnits'
  | 'costCurrency'
  | 'attemptedCostUnits'
  | 'kind'
  | 'decisionReceiptId'
>

/** The SQL column of each signed column, for messages. */
export const SIGNED_COLUMN_NAMES: Readonly<Record<keyof SignedColumns, string>> = Object.freeze({
  timestamp: 'timestamp',
  requestId: 'request_id',
  method: 'method',
  routePattern: 'route_pattern',
  toolServer: 'tool_server',
  toolName: 'tool_name',
  outcome: 'outcome',
  capabilityId: 'capability_id',
  tenant: 'tenant',
  subjectKey: 'subject_key',
  costUnits: 'cost_units',
  costCurrency: 'cost_currency',
  attemptedCostUnits: 'attempted_cost_units',
  kind: 'kind',
  decisionReceiptId: 'decision_receipt_id',
})

/** The select list of an audited row (store-ports.ts AuditedReceipt), the same SQL on SQLite and PostgreSQL. */
export const AUDITED_COLUMNS = `seq, receipt_id AS "receiptId", timestamp, request_id AS "requestId", method, route_pattern AS "routePattern",
  tool_server AS "toolServer", tool_name AS "toolName", outcome, capability_id AS "capabilityId", tenant, subject_key AS "subjectKey",
  cost_units AS "costUnits", cost_currency AS "costCurrency", attempted_cost_units AS "attemptedCostUnits", kind,
  decision_receipt_id AS "decisionReceiptId", http_json AS "httpJson", core_json AS "coreJson"`

/** The columns of an HttpReceipt's row, from the signed receipt alone. Throws on a receipt without a verdict. */
export function signedHttpColumns(receipt: HttpReceipt): SignedColumns {
  const own = httpReceiptColumns(receipt)
  const metadata = receipt.metadata ?? {}
  const kind: ReceiptRowKind = metadata['gate_http_status_scope'] === 'final' ? 'final' : 'decision'
  return {
    timestamp: own.timestamp,
    requestId: own.requestId,
    method: own.method,
    routePattern: own.routePattern,
    toolServer: own.toolServer,
    toolName: own.toolName,
    outcome: own.outcome,
    capabilityId: own.capabilityId,
    tenant: text(metadata[TENANT_METADATA_KEY]),
    subjectKey: text(metadata[SUBJECT_METADATA_KEY]),
    ...costColumns(metadata, kind),
    kind,
    decisionReceiptId: text(metadata['gate_decision_receipt_id']),
  }
}

const CORE_OUTCOMES: Readonly<Record<string, SignedColumns['outcome']>> = { allow: 'allow', deny: 'deny', cancelled: 'cancelled', incomplete: 'incomplete' }

/** The columns of a core-only receipt's row (a tool call's), from the signed receipt alone. */
export function signedCoreColumns(receipt: CoreReceipt): SignedColumns {
  const metadata = (receipt.metadata ?? {}) as Record<string, unknown>
  const decisionReceiptId = text(metadata['gate_decision_receipt_id'])
  const kind: ReceiptRowKind = decisionReceiptId === null ? 'decision' : 'final'
  return {
    timestamp: receipt.timestamp,
    requestId: text(metadata['gate_request_id']) ?? '',
    method: 'tools/call',
    routePattern: receipt.tool_name,
    toolServer: receipt.tool_server,
    toolName: receipt.tool_name,
    outcome: CORE_OUTCOMES[receipt.decision?.verdict ?? ''] ?? ('' as SignedColumns['outcome']),
    capabilityId: receipt.capability_id === '' ? null : receipt.capability_id,
    tenant: text(receipt.tenant_id),
    subjectKey: text(metadata[SUBJECT_METADATA_KEY]),
    ...costColumns(metadata, kind),
    kind,
    decisionReceiptId,
  }
}

/** The columns whose stored value differs from the signed one, as `name is X, the signed receipt says Y`. */
export function columnMismatches(stored: SignedColumns, signed: SignedColumns): { column: string; stored: unknown; signed: unknown }[] {
  const out: { column: string; stored: unknown; signed: unknown }[] = []
  for (const key of Object.keys(SIGNED_COLUMN_NAMES) as (keyof SignedColumns)[]) {
    // PostgreSQL answers bigint columns as strings: compare the values' text
    const a = stored[key] ?? null
    const b = signed[key] ?? null
    if ((a === null) !== (b === null) || (a !== null && String(a) !== String(b))) out.push({ column: SIGNED_COLUMN_NAMES[key], stored: a, signed: b })
  }
  return out
}

// kernel/financial-record.ts writes `financial` and the cost columns from the same numbers
function costColumns(metadata: Record<string, unknown>, kind: ReceiptRowKind): Pick<SignedColumns, 'costUnits' | 'costCurrency' | 'attemptedCostUnits'> {
  const financial = metadata['financial'] as Record<string, unknown> | null | undefined
  if (kind === 'final' || typeof financial !== 'object' || financial === null) return { costUnits: null, costCurrency: null, attemptedCostUnits: null }
  return { costUnits: units(financial['cost_charged']), costCurrency: text(financial['currency']), attemptedCostUnits: units(financial['attempted_cost']) }
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function units(value: unknown): number | null {
  return typeof value === 'number' || typeof value === 'bigint' ? Number(value) : null
}
