// Checks a served receipt in the browser, as @gate/sdk does. A core receipt (spec 03 gate.receipt.v1, as
// verifyCoreReceipt): the id is the SHA-256 of the canonical body (RFC 8785), and the Ed25519 signature by
// kernel_key covers the canonical {id, body}. An HttpReceipt (spec 02, served as stored when trust-control
// holds no key to make its core form, as checkHttpReceipt): the authority semantics, then the id is the
// SHA-256 of the canonical receipt without id and signature, and the signature covers the canonical
// receipt without signature. WebCrypto only: where it is missing (no secure context, no Ed25519), the
// receipt is reported unchecked, never verified. A receipt trust-control itself found not to verify
// (its response's `unverifiedReceipts`) is not verified whatever this page could check.

/** RFC 8785 canonical JSON of a value parsed from JSON (keys in UTF-16 code unit order). */
export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number')
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const keys = Object.keys(value).filter(k => value[k] !== undefined).sort()
  return `{${keys.map(k => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
}

const HEX64 = /^[0-9a-f]{64}$/
const HEX128 = /^[0-9a-f]{128}$/

function hexToBytes(hex) {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), b => b.toString(16).padStart(2, '0')).join('')
}

const utf8 = text => new TextEncoder().encode(text)

/**
 * The verification of one served receipt: `verified` (id and signature check, signer trusted),
 * `not_verified` (something failed: `detail` says what) or `unchecked` (this browser cannot check).
 */
export async function verifyReceipt(receipt, trustedKeys) {
  const subtle = globalThis.crypto?.subtle
  if (subtle === undefined) return { state: 'unchecked', detail: 'this page is not a secure context (use https or a loopback address): WebCrypto is unavailable' }
  if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) return { state: 'not_verified', detail: 'not a JSON object' }
  const { id, signature, bbs_signature, ...body } = receipt
  if (typeof id !== 'string' || typeof signature !== 'string' || typeof body.kernel_key !== 'string') {
    return { state: 'not_verified', detail: 'id, signature and kernel_key must be strings' }
  }
  if (!HEX64.test(body.kernel_key) || !HEX128.test(signature)) {
    return { state: 'unchecked', detail: 'not an Ed25519 key and signature (only Ed25519 is checked in the browser)' }
  }
  const http = isHttpReceipt(receipt)
  if (http) {
    const problem = authoritySemanticsProblem(body)
    if (problem !== undefined) return { state: 'not_verified', detail: problem }
    // spec 02: a null observation_outcome is no member of the signed body
    if (body.observation_outcome === null) delete body.observation_outcome
  }
  const computedId = bytesToHex(await subtle.digest('SHA-256', utf8(canonicalJson(body))))
  if (computedId !== id) return { state: 'not_verified', detail: 'id is not the hash of the receipt body' }
  const signed = http ? { ...body, id } : bbs_signature === undefined ? { id, body } : { id, body, bbs_signature }
  let valid
  try {
    const key = await subtle.importKey('raw', hexToBytes(body.kernel_key), { name: 'Ed25519' }, false, ['verify'])
    valid = await subtle.verify({ name: 'Ed25519' }, key, hexToBytes(signature), utf8(canonicalJson(signed)))
  } catch (err) {
    return { state: 'unchecked', detail: `this browser cannot check Ed25519 signatures (${err.message})` }
  }
  if (!valid) return { state: 'not_verified', detail: 'the signature does not verify against kernel_key' }
  if (!trustedKeys.includes(body.kernel_key)) return { state: 'not_verified', detail: 'signature valid, but kernel_key is not a trusted authority key' }
  return { state: 'verified', detail: 'id and Ed25519 signature check; signed by a trusted authority key' }
}

/** An HttpReceipt (spec 02) rather than a core receipt: as trust-control tells them apart (core-form.ts). */
export function isHttpReceipt(receipt) {
  return 'verdict' in receipt && 'request_id' in receipt && !('decision' in receipt) && !('tool_server' in receipt)
}

// spec 02, receipt signing order (3): the only shape the HTTP authority signs
function authoritySemanticsProblem(body) {
  if (body.receipt_kind !== 'mediated_decision') return `receipt_kind must be mediated_decision, got ${String(body.receipt_kind)}`
  if (body.boundary_class !== 'prevent') return `boundary_class must be prevent, got ${String(body.boundary_class)}`
  if (body.observation_outcome !== undefined && body.observation_outcome !== null) return 'observation_outcome must not be present'
  if (body.trust_level !== 'mediated') return `trust_level must be mediated, got ${String(body.trust_level)}`
  return undefined
}

/**
 * The verification of a served receipt that trust-control listed in its response's `unverifiedReceipts`
 * (it refused the receipt's core form: the stored text does not verify): not verified, with trust-control's
 * failing step. Undefined when it is not listed. `receipt` is null where the stored text was not JSON.
 */
export function refusedByServer(receipt, unverified) {
  if (!Array.isArray(unverified)) return undefined
  const id = receipt !== null && typeof receipt === 'object' ? receipt.id : undefined
  const entry = unverified.find(u => u !== null && typeof u === 'object' && u.receiptId === id)
  if (entry === undefined) return undefined
  return { state: 'not_verified', detail: `trust-control found it does not verify (${entry.failedStep}: ${entry.detail}); it serves the stored receipt and signs nothing over it` }
}
