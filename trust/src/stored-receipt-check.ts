// The check every path runs on a stored receipt before it signs anything over it (docs/receipts.md,
// "Nothing is signed unverified"): the core form made on first read, a key rotation's conversions and
// the transparency log's leaves. A row's stored text is what an attacker with write access to the store
// can change; a signature made over it afterwards would vouch for the change. So the text must be a
// receipt whose id is the row's id, whose id and signature verify in spec 02's order, and whose signer
// is a trusted key; anything else is refused with the step that failed. One module for SQLite and
// PostgreSQL alike: the stores only hand over the texts.
import { checkHttpReceipt, checkHttpReceiptOffThread, verifyCoreReceipt, type HttpReceiptCheck } from '@gate/sdk'

/** A row's signed text: its HttpReceipt or, for a receipt that has no HTTP form (a tool call's), its core receipt. */
export interface StoredReceiptText {
  /** The row's receipt id (the column it is found by). */
  receiptId: string
  httpJson: string | null
  coreJson: string | null
}

/** The first failing step (spec 02's order: semantics, id, signature; then signer); `shape` when the text is not a receipt object. */
export type StoredReceiptStep = 'shape' | 'semantics' | 'receipt_id' | 'signature' | 'signer' | 'parameter_hash'

/** Why a stored receipt is refused. */
export interface StoredReceiptFailure {
  ok: false
  step: StoredReceiptStep
  detail: string
}

/** A stored receipt, parsed: which form, the object, the exact text, and the key it names. */
export interface ParsedStoredReceipt {
  ok: true
  form: 'http' | 'core'
  receipt: Record<string, unknown>
  text: string
  kernelKey: string
}

/** The keys a stored receipt's signer must be one of (re-iterable: read more than once). */
export type TrustedKeys = readonly string[] | ReadonlySet<string>

/** The outcome of `checkStoredReceipt`. */
export type StoredReceiptCheck = { ok: true } | StoredReceiptFailure

/** Parses a row's signed text; what is not a receipt object naming its id and kernel_key fails at `shape`. */
export function readStoredReceipt(row: StoredReceiptText): ParsedStoredReceipt | StoredReceiptFailure {
  const form = row.httpJson === null ? 'core' : 'http'
  const text = row.httpJson ?? row.coreJson
  if (text === null) return { ok: false, step: 'shape', detail: 'the row holds no receipt' }
  let receipt: unknown
  try {
    // A stored text was written by a store's writer or taken in through ingest's strict reader, so the
    // built-in parser (about 3x faster than the strict one) reads a genuine one the same.
    receipt = JSON.parse(text)
  } catch (err) {
    return { ok: false, step: 'shape', detail: `the stored text is not JSON (${(err as Error).message})` }
  }
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return { ok: false, step: 'shape', detail: 'the stored text is not a JSON object' }
  const r = receipt as Record<string, unknown>
  if (typeof r.id !== 'string' || typeof r.kernel_key !== 'string') return { ok: false, step: 'shape', detail: 'the stored receipt has no id or kernel_key string' }
  return { ok: true, form, receipt: r, text, kernelKey: r.kernel_key }
}

/** Checks a parsed stored receipt against `trustedKeys`, on this thread. Never throws. */
export function checkStoredReceipt(row: StoredReceiptText, stored: ParsedStoredReceipt, trustedKeys: TrustedKeys): StoredReceiptCheck {
  const mismatch = idColumnMismatch(row, stored)
  if (mismatch !== undefined) return mismatch
  if (stored.form === 'core') return coreOutcome(stored, trustedKeys)
  return httpOutcome(checkHttpReceipt(stored.receipt, { trustedKeys, receiptText: stored.text }))
}

/** `checkStoredReceipt` with an HttpReceipt's signature verified off the event loop (batches: the transparency log). */
export async function checkStoredReceiptOffThread(row: StoredReceiptText, stored: ParsedStoredReceipt, trustedKeys: TrustedKeys): Promise<StoredReceiptCheck> {
  const mismatch = idColumnMismatch(row, stored)
  if (mismatch !== undefined) return mismatch
  if (stored.form === 'core') return coreOutcome(stored, trustedKeys)
  return httpOutcome(await checkHttpReceiptOffThread(stored.receipt, { trustedKeys, receiptText: stored.text }))
}

// A genuine receipt filed under another receipt's id (two rows' texts swapped) verifies on its own: the
// row would then serve, and a core form would sign, a decision that is not the one the id names.
function idColumnMismatch(row: StoredReceiptText, stored: ParsedStoredReceipt): StoredReceiptFailure | undefined {
  if (stored.receipt.id === row.receiptId) return undefined
  return { ok: false, step: 'receipt_id', detail: `the row's receipt id ${row.receiptId} is not the stored receipt's id ${String(stored.receipt.id)}` }
}

function httpOutcome(check: HttpReceiptCheck): StoredReceiptCheck {
  return check.failedStep === null ? { ok: true } : { ok: false, step: check.failedStep, detail: check.detail }
}

// A core-only receipt may be evidence (a trace or advisory kind): its checks passing is enough here.
function coreOutcome(stored: ParsedStoredReceipt, trustedKeys: TrustedKeys): StoredReceiptCheck {
  const check = verifyCoreReceipt(stored.receipt, { trustedKeys })
  return check.failedStep === null ? { ok: true } : { ok: false, step: check.failedStep, detail: check.detail }
}
