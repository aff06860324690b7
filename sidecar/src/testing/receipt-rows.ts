// Stores and drafts for the SQLite store tests; rows and bodies come from @gate/trust/testing.
import type { Test } from 'tap'
import { exampleCoreReceiptDraft } from '@gate/sdk/testing'
import { openReceiptStore, type ReceiptStore, type ReceiptStoreOptions } from '../stores/receipt-store.js'
import type { CoreReceiptDraft } from '../stores/receipt-writer.js'

/** The driver the store suites run on: GATE_STORE_DRIVER (node-sqlite-driver.test sets node:sqlite). */
export const STORE_DRIVER = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

/** A receipt store on the suite's driver, closed when the test ends. */
export async function openTestReceiptStore(t: Test, path: string, options: ReceiptStoreOptions = {}): Promise<ReceiptStore> {
  const store = await openReceiptStore(path, { driver: STORE_DRIVER, ...options })
  t.teardown(() => store.close())
  return store
}

/** An unsigned core receipt body (a tool call's, `gate.receipt.v1`), for `writeCore`. */
export function coreReceiptDraft(n: number, extra: Partial<CoreReceiptDraft> = {}): CoreReceiptDraft {
  return exampleCoreReceiptDraft(n, extra)
}

export { receiptBody, receiptRow } from '@gate/trust/testing'
