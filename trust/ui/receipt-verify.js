// Checks a served receipt in the browser, as @gate/sdk does. A core receipt (spec 03 gate.receipt.v1, as
// verifyCoreReceipt): the id is the SHA-256 of the canonical body (RFC 8785), and the signature by
// kernel_key covers the canonical {id, body}. An HttpReceipt (spec 02, served as stored when trust-control
// holds no key to make its core form, as checkHttpReceipt): the authority semantics, then the id is the
// SHA-256 of the canonical receipt without id and signature, and the signature covers the canonical
// receipt without signature. Keys and signatures in spec 02's forms: Ed25519, P-256 and P-384 (ECDSA, DER
// signatures, SHA-256 / SHA-384) are checked with WebCrypto; a hybrid (spec 03) verifies only when both
// halves do: the classical one with WebCrypto, the ML-DSA-65 one with the installed @noble/post-quantum,
// which trust-control serves beside this module (trust/src/routes/ui-vendor.ts). Where WebCrypto is
// missing (no secure context, no Ed25519) the receipt is reported unchecked, never verified. A receipt
// trust-control itself found not to verify (its response's `unverifiedReceipts`) is not verified whatever
// this page could check.
import { ml_dsa65 } from './noble-post-quantum-ml-dsa.js'

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
  const form = signatureForm(body.kernel_key, signature)
  if (form === undefined) return { state: 'not_verified', detail: 'kernel_key and signature are not of one algorithm in spec 02\'s forms' }
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
    valid = await verifyClassical(subtle, form, utf8(canonicalJson(signed)))
  } catch (err) {
    return { state: 'unchecked', detail: `this browser cannot check ${form.name} signatures (${err.message})` }
  }
  if (!valid) return { state: 'not_verified', detail: `the ${form.hybrid ? `classical (${form.name}) half of the hybrid ` : ''}signature does not verify against kernel_key` }
  if (form.hybrid && !verifyMlDsa(form.mldsa, utf8(canonicalJson(signed)))) {
    return { state: 'not_verified', detail: 'the ML-DSA-65 half of the hybrid signature does not verify against kernel_key' }
  }
  if (!trustedKeys.includes(body.kernel_key)) return { state: 'not_verified', detail: 'signature valid, but kernel_key is not a trusted authority key' }
  const what = form.hybrid ? `${form.name} + ML-DSA-65 hybrid signature (both halves)` : `${form.name} signature`
  return { state: 'verified', detail: `id and ${what} check; signed by a trusted authority key` }
}

const CURVES = {
  p256: { name: 'P-256', hash: 'SHA-256', bytes: 32, point: /^04[0-9a-f]{128}$/ },
  p384: { name: 'P-384', hash: 'SHA-384', bytes: 48, point: /^04[0-9a-f]{192}$/ },
}
const HEX = /^(?:[0-9a-f]{2})+$/

// The classical key and signature of a wire pair (spec 02: bare hex Ed25519, `p256:`/`p384:` prefixed;
// spec 03: `hybrid:<classical>:<mldsa65>:<alg_set>`, both of one alg_set), or undefined when malformed.
function signatureForm(kernelKey, signature) {
  if (kernelKey.startsWith('hybrid:') || signature.startsWith('hybrid:')) {
    const key = kernelKey.split(':')
    const sig = signature.split(':')
    if (key.length !== 4 || sig.length !== 4 || key[0] !== 'hybrid' || sig[0] !== 'hybrid' || key[3] !== sig[3]) return undefined
    const classical = { 'ed25519+mldsa65': 'ed25519', 'p256+mldsa65': 'p256', 'p384+mldsa65': 'p384' }[key[3]]
    if (classical === undefined || !HEX.test(key[2]) || !HEX.test(sig[2])) return undefined
    const form = classicalForm(classical, key[1], sig[1])
    return form === undefined ? undefined : { ...form, hybrid: true, mldsa: { key: hexToBytes(key[2]), sig: hexToBytes(sig[2]) } }
  }
  const [algorithm, keyHex, sigHex] = kernelKey.startsWith('p256:') || kernelKey.startsWith('p384:') ? [kernelKey.slice(0, 4), kernelKey.slice(5), signature.slice(5)] : ['ed25519', kernelKey, signature]
  if (algorithm !== 'ed25519' && !signature.startsWith(`${algorithm}:`)) return undefined
  const form = classicalForm(algorithm, keyHex, sigHex)
  return form === undefined ? undefined : { ...form, hybrid: false }
}

function classicalForm(algorithm, keyHex, sigHex) {
  if (algorithm === 'ed25519') return HEX64.test(keyHex) && HEX128.test(sigHex) ? { name: 'Ed25519', key: hexToBytes(keyHex), sig: hexToBytes(sigHex) } : undefined
  const curve = CURVES[algorithm]
  if (!curve.point.test(keyHex) || !HEX.test(sigHex)) return undefined
  const sig = derToRaw(hexToBytes(sigHex), curve.bytes)
  return sig === undefined ? undefined : { name: curve.name, curve, key: hexToBytes(keyHex), sig }
}

function verifyClassical(subtle, form, message) {
  if (form.curve === undefined) {
    return subtle.importKey('raw', form.key, { name: 'Ed25519' }, false, ['verify']).then(key => subtle.verify({ name: 'Ed25519' }, key, form.sig, message))
  }
  return subtle
    .importKey('raw', form.key, { name: 'ECDSA', namedCurve: form.curve.name }, false, ['verify'])
    .then(key => subtle.verify({ name: 'ECDSA', hash: form.curve.hash }, key, form.sig, message))
}

// ML-DSA-65 (FIPS 204, empty context) as the SDK verifies it; a key or signature of the wrong length is
// no valid signature, never an exception
function verifyMlDsa(mldsa, message) {
  try {
    return ml_dsa65.verify(mldsa.sig, message, mldsa.key)
  } catch {
    return false
  }
}

// A DER ECDSA signature (SEQUENCE of two INTEGERs, as Gate signs) as the r||s WebCrypto verifies; undefined
// when it is not exactly that
function derToRaw(der, size) {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return undefined
  const out = new Uint8Array(2 * size)
  let at = 2
  for (let half = 0; half < 2; half++) {
    if (der[at] !== 0x02) return undefined
    const length = der[at + 1]
    let value = der.subarray(at + 2, at + 2 + length)
    if (length === 0 || value.length !== length) return undefined
    while (value.length > size && value[0] === 0) value = value.subarray(1)
    if (value.length > size) return undefined
    out.set(value, half * size + size - value.length)
    at += 2 + length
  }
  return at === der.length ? out : undefined
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
