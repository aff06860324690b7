// Receipt rows and bodies for store tests: rows with a fresh random id each, fields varying with `n`, and
// an HTTP JSON of about the size of a real receipt (so a few hundred rows fill many pages).
import { randomBytes } from 'node:crypto'
import type { HttpReceiptBody } from '@gate/sdk'
import type { ReceiptRow } from '../stores/receipt-row.js'

export function receiptRow(n: number, overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  const id = overrides.receiptId ?? randomBytes(32).toString('hex')
  return {
    receiptId: id,
    timestamp: 1_700_000_000 + n,
    requestId: `req-${n}`,
    method: 'GET',
    routePattern: '/items',
    toolServer: 'http',
    toolName: 'GET /items',
    outcome: 'allow',
    kind: 'decision',
    httpJson: JSON.stringify({ id, n, pad: 'x'.repeat(1100) }),
    ...overrides,
  }
}

/** An unsigned HttpReceipt body (request `req-n`), for the receipt writers to sign. */
export function receiptBody(n: number, extra: Partial<HttpReceiptBody> = {}): HttpReceiptBody {
  return {
    request_id: `req-${n}`,
    route_pattern: '/pets',
    method: 'POST',
    caller_identity_hash: 'b'.repeat(64),
    verdict: { verdict: 'allow' },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'caller_executed',
    redaction_mode: 'none',
    response_status: 200,
    timestamp: 1_700_000_000 + n,
    content_hash: 'c'.repeat(64),
    policy_hash: 'd'.repeat(64),
    trust_level: 'mediated',
    capability_id: null,
    metadata: { gate_http_status_scope: 'decision' },
    ...extra,
  }
}
