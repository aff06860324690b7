// Receipt rows, bodies and stores for store tests: rows with a fresh random id each, fields varying with
// `n`, and an HTTP JSON of about the size of a real receipt (so a few hundred rows fill many pages).
import type { Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { type HttpReceiptBody } from '@gate/sdk'
import { exampleCoreReceiptDraft } from '@gate/sdk/testing'
import { openReceiptStore, type ReceiptRow, type ReceiptStore, type ReceiptStoreOptions } from '../stores/receipt-store.js'
import type { CoreReceiptDraft } from '../stores/receipt-writer.js'

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

/** The driver the store suites run on: GATE_STORE_DRIVER (node-sqlite-driver.test sets node:sqlite). */
export const STORE_DRIVER = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

/** A receipt store on the suite's driver, closed when the test ends. */
export async function openTestReceiptStore(t: Test, path: string, options: ReceiptStoreOptions = {}): Promise<ReceiptStore> {
  const store = await openReceiptStore(path, { driver: STORE_DRIVER, ...options })
  t.teardown(() => store.close())
  return store
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

/** An unsigned core receipt body (a tool call's, `gate.receipt.v1`), for `writeCore`. */
export function coreReceiptDraft(n: number, extra: Partial<CoreReceiptDraft> = {}): CoreReceiptDraft {
  return exampleCoreReceiptDraft(n, extra)
}
