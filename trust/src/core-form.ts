// The core receipt form (spec 03 gate.receipt.v1) of a stored HttpReceipt, as trust-control serves it:
// `toCoreReceiptWithKeypair` under the authority's current signer, serialized as canonical JSON. Ed25519
// signatures are deterministic, so the read path and a rotation's conversion produce the same bytes for a
// row whenever they compute it. Nothing is signed unverified: the stored text must pass
// `checkStoredReceipt` against the trusted keys first (stored-receipt-check.ts).
import { toCoreReceiptJson, type HttpReceipt, type Signer } from '@gate/sdk'
import { checkStoredReceipt, readStoredReceipt, type StoredReceiptStep, type TrustedKeys } from './stored-receipt-check.js'

/** Why a stored HttpReceipt has no core form under `signer`. */
export type CoreFormProblem = 'foreign_key' | 'unverified' | 'unconvertible'

/** The core form of one stored receipt, or why it has none (`unverified`: the step its stored text failed). */
export type CoreFormResult =
  | { json: string }
  | { problem: 'foreign_key' | 'unconvertible'; detail: string }
  | { problem: 'unverified'; step: StoredReceiptStep; detail: string }

/**
 * The canonical core JSON of the row's stored HttpReceipt, signed by `signer` once the text verifies
 * against `trustedKeys`; or why there is none. A row signed by another key is `foreign_key` (not
 * checked: nothing is signed for it). Never throws.
 */
export function toCoreJson(row: { receiptId: string; httpJson: string }, signer: Signer, trustedKeys: TrustedKeys): CoreFormResult {
  const text = { receiptId: row.receiptId, httpJson: row.httpJson, coreJson: null }
  const stored = readStoredReceipt(text)
  if (!stored.ok) return { problem: 'unverified', step: stored.step, detail: stored.detail }
  // Signing with another key would produce a core receipt whose kernel_key is not its signer.
  if (stored.kernelKey !== signer.publicKey) return { problem: 'foreign_key', detail: `signed by ${stored.kernelKey}, not the current authority key` }
  const check = checkStoredReceipt(text, stored, trustedKeys)
  if (!check.ok) return { problem: 'unverified', step: check.step, detail: check.detail }
  try {
    return { json: toCoreReceiptJson(stored.receipt as unknown as HttpReceipt, signer) }
  } catch (err) {
    return { problem: 'unconvertible', detail: (err as Error).message }
  }
}

/** True when a served receipt text is an HttpReceipt (served as stored) rather than a core receipt. */
export function isHttpReceiptJson(receipt: Record<string, unknown>): boolean {
  return 'verdict' in receipt && 'request_id' in receipt && !('decision' in receipt) && !('tool_server' in receipt)
}
