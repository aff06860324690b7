// Offline receipt arithmetic (spec 02, HttpReceipt and "Receipt signing order"), independent of the
// sidecar: the content-addressed id, the signature with the embedded kernel_key, the two request
// hashes, and re-signing with a foreign key (including bodies the signing code would refuse, so the
// checks can hand /gate/verify a validly signed receipt with broken semantics).
import {
  callerIdentityHash,
  canonicalJson,
  checkSignature,
  contentHash,
  sha256Hex,
  utf8,
  type GateHttpRequest,
  type HttpReceipt,
  type Signer,
} from '@gate/sdk'

type ReceiptLike = Record<string, unknown>

function without(receipt: ReceiptLike, ...names: string[]): ReceiptLike {
  const copy: ReceiptLike = { ...receipt }
  for (const n of names) delete copy[n]
  return copy
}

/** The content-addressed id: SHA-256 of the canonical receipt body without `id` and `signature`. */
export function recomputeReceiptId(receipt: ReceiptLike): string {
  return sha256Hex(canonicalJson(without(receipt, 'id', 'signature')))
}

/** Why the signature does not verify with the embedded kernel_key, or undefined when it does. */
export function signatureProblem(receipt: ReceiptLike): string | undefined {
  if (typeof receipt.kernel_key !== 'string') return 'kernel_key is not a string'
  if (typeof receipt.signature !== 'string') return 'signature is not a string'
  const result = checkSignature(receipt.kernel_key, utf8(canonicalJson(without(receipt, 'signature'))), receipt.signature)
  return result.valid ? undefined : (result.reason ?? 'signature does not verify')
}

/** The query the sidecar binds: the sent query, or the empty map. */
function sentQuery(sent: GateHttpRequest, options: { dropCapability?: boolean } = {}): Record<string, string> {
  const query = { ...(sent.query ?? {}) }
  // Gate's documented choice (docs/kernel.md): the token is a credential, not content
  if (options.dropCapability === true) delete query.gate_capability
  return query
}

/** content_hash recomputed from what was sent, with the receipt's route_pattern (spec 02). */
export function expectedContentHash(sent: GateHttpRequest, routePattern: string, options: { dropCapability?: boolean } = {}): string {
  return contentHash({ body_hash: sent.body_hash ?? null, method: sent.method, path: sent.path, query: sentQuery(sent, options), route_pattern: routePattern })
}

/** caller_identity_hash recomputed from the caller sent (defaults filled in; spec 02, Identity hash). */
export function expectedCallerHash(sent: GateHttpRequest): string {
  return callerIdentityHash(sent.caller)
}

/**
 * Signs `body` as `signer` following the five steps except the semantics check, so bodies with
 * broken authority semantics can be signed too. `kernel_key` is set to the signer's key.
 */
export function signReceiptUnchecked(body: ReceiptLike, signer: Signer): HttpReceipt {
  const b: ReceiptLike = { ...without(body, 'id', 'signature'), kernel_key: signer.publicKey }
  const id = sha256Hex(canonicalJson(b))
  const withId = { ...b, id }
  return { ...withId, signature: signer.sign(utf8(canonicalJson(withId))) } as unknown as HttpReceipt
}

/** A copy of the receipt with its signature bytes changed (still well-formed hex of the same length). */
export function flipSignature(receipt: HttpReceipt): HttpReceipt {
  const sig = receipt.signature
  const i = sig.length - 2
  const flipped = sig.slice(0, i) + (sig[i] === '0' ? '1' : '0') + sig.slice(i + 1)
  return { ...receipt, signature: flipped }
}
