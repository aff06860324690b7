// Receipt rows for store tests: a fresh random id each, fields varying with `n`, and an HTTP JSON of
// about the size of a real receipt (so a few hundred rows fill many pages).
import { randomBytes } from 'node:crypto'
import type { ReceiptRow } from '../stores/receipt-store.js'

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
