// The core receipt form (spec 03 gate.receipt.v1) of a stored HttpReceipt, as trust-control serves it:
// `toCoreReceiptWithKeypair` under the authority's current signer, serialized as canonical JSON. Ed25519
// signatures are deterministic, so the read path and a rotation's conversion produce the same bytes for a
// row whenever they compute it.
import { toCoreReceiptJson, type HttpReceipt, type Signer } from '@gate/sdk'

/** Why a stored HttpReceipt has no core form under `signer`. */
export type CoreFormProblem = 'foreign_key' | 'unreadable' | 'unconvertible'

/** The core form of one stored receipt, or why it has none. */
export type CoreFormResult = { json: string } | { problem: CoreFormProblem; detail: string }

/** The canonical core JSON of `httpJson` signed by `signer`, or why there is none. Never throws. */
export function toCoreJson(httpJson: string, signer: Signer): CoreFormResult {
  let receipt: HttpReceipt
  try {
    // A stored text: written by this store's writer or taken in through ingest's strict reader, so the
    // built-in parser (about 3x faster than the strict one) reads it the same.
    receipt = JSON.parse(httpJson) as HttpReceipt
  } catch (err) {
    return { problem: 'unreadable', detail: (err as Error).message }
  }
  if (typeof receipt !== 'object' || receipt === null || typeof receipt.kernel_key !== 'string') {
    return { problem: 'unreadable', detail: 'not a receipt object with a kernel_key' }
  }
  // Signing with another key would produce a core receipt whose kernel_key is not its signer.
  if (receipt.kernel_key !== signer.publicKey) return { problem: 'foreign_key', detail: `signed by ${receipt.kernel_key}, not the current authority key` }
  try {
    return { json: toCoreReceiptJson(receipt, signer) }
  } catch (err) {
    return { problem: 'unconvertible', detail: (err as Error).message }
  }
}

/** True when a served receipt text is an HttpReceipt (served as stored) rather than a core receipt. */
export function isHttpReceiptJson(receipt: Record<string, unknown>): boolean {
  return 'verdict' in receipt && 'request_id' in receipt && !('decision' in receipt) && !('tool_server' in receipt)
}
