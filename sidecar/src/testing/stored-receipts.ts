// Reading back what a killed `gate` process acknowledged: each receipt id looked up in the SQLite file
// and verified against the process's key.
import { verifyHttpReceipt, type HttpReceipt } from '@gate/sdk'
import { openReceiptStore } from '../stores/index.js'

/** Every id's stored receipt, verified against `kernelKey`: the ids not stored, and those that do not verify. */
export async function checkStoredReceipts(db: string, ids: Iterable<string>, kernelKey: string): Promise<{ missing: string[]; invalid: string[]; receipts: Map<string, HttpReceipt> }> {
  const store = await openReceiptStore(db)
  try {
    const missing: string[] = []
    const invalid: string[] = []
    const receipts = new Map<string, HttpReceipt>()
    for (const id of ids) {
      const row = await store.query.getById(id)
      if (row === undefined) {
        missing.push(id)
        continue
      }
      const receipt = JSON.parse(row.httpJson ?? 'null') as HttpReceipt
      receipts.set(id, receipt)
      if (!verifyHttpReceipt(receipt, { trustedKeys: [kernelKey] }).ok) invalid.push(id)
    }
    return { missing, invalid, receipts }
  } finally {
    await store.close()
  }
}
