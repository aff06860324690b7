// Signature verification, dispatched on the key's prefix, on either backend. Never throws for bad
// input: a malformed key or signature simply does not verify (fail closed). A hybrid signature verifies
// only when both halves do (spec 03): the classical one on the chosen backend, ML-DSA-65 on
// @noble/post-quantum (pure JS, so the edge runtime checks it too).
import * as ed from '@noble/ed25519'
import { p256, p384 } from '@noble/curves/nist.js'
import { sha512 } from '@noble/hashes/sha2.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { type CryptoBackendName, defaultBackend, nodeCrypto } from './crypto-backend.js'
import { type ClassicalKey, type KeyAlgorithm, type ParsedKey, type ParsedSignature, parsePublicKey, parseSignature } from './keys.js'
import type { KeyObject } from 'node:crypto'

ed.hashes.sha512 = sha512

const ED25519_SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00])
const CURVE_NAME = { p256: 'P-256', p384: 'P-384' } as const
const DIGEST = { p256: 'sha256', p384: 'sha384' } as const

// Parsing a public key into a KeyObject costs more than the verification itself; keep recent ones.
const KEY_CACHE_LIMIT = 1024
const keyCache = new Map<string, KeyObject | null>()

export interface VerifySignatureResult {
  valid: boolean
  /** Why it did not verify: a malformed key or signature, or a signature mismatch. */
  reason?: string
}

/** Verifies `signature` over `message` with the wire-form `publicKey`. */
export function verifySignature(
  publicKey: string,
  message: Uint8Array,
  signature: string,
  backend: CryptoBackendName = defaultBackend,
): boolean {
  return checkSignature(publicKey, message, signature, backend).valid
}

/** Like `verifySignature`, with the reason when it fails. */
export function checkSignature(
  publicKey: string,
  message: Uint8Array,
  signature: string,
  backend: CryptoBackendName = defaultBackend,
): VerifySignatureResult {
  const parsed = parseKeyAndSignature(publicKey, signature)
  if ('result' in parsed) return parsed.result
  const { key, sig } = parsed
  if (key.algorithm === 'hybrid') {
    // both halves must verify: either one alone is not the key's signature
    if (sig.algorithm !== 'hybrid') return { valid: false, reason: 'a hybrid key needs a hybrid signature (both halves)' }
    if (!verifyClassical(key.classical, message, sig.classical, backend)) return { valid: false, reason: 'the classical half of the hybrid signature does not verify' }
    return verifyMlDsa(key.mldsa, message, sig.mldsa) ? { valid: true } : { valid: false, reason: 'the ML-DSA-65 half of the hybrid signature does not verify' }
  }
  return signatureResult(verifyClassical(key, message, classicalBytes(sig), backend))
}

function verifyClassical(key: ClassicalKey, message: Uint8Array, sig: Uint8Array, backend: CryptoBackendName): boolean {
  return backend === 'node' && nodeCrypto !== undefined ? verifyNode(key, message, sig) : verifyNoble(key.algorithm, key.bytes, message, sig)
}

function verifyMlDsa(publicKey: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    return ml_dsa65.verify(sig, message, publicKey)
  } catch {
    return false
  }
}

function classicalBytes(sig: ParsedSignature): Uint8Array {
  return sig.algorithm === 'hybrid' ? sig.classical : sig.bytes
}

/**
 * Like `checkSignature`, but on node:crypto the verification runs on the libuv thread pool, leaving the
 * event loop free meanwhile (it costs more wall time: worth it only while the loop is busy). Without
 * node:crypto it verifies here. Never rejects.
 */
export function checkSignatureOffThread(publicKey: string, message: Uint8Array, signature: string): Promise<VerifySignatureResult> {
  const parsed = parseKeyAndSignature(publicKey, signature)
  if ('result' in parsed) return Promise.resolve(parsed.result)
  const { key, sig } = parsed
  // a hybrid signature is rare and its ML-DSA half runs in JS anyway: verified here, both halves
  if (key.algorithm === 'hybrid') return Promise.resolve(checkSignature(publicKey, message, signature))
  const bytes = classicalBytes(sig)
  if (nodeCrypto === undefined) return Promise.resolve(signatureResult(verifyNoble(key.algorithm, key.bytes, message, bytes)))
  const c = nodeCrypto
  const keyObject = cachedKeyObject(c, key)
  if (keyObject === null) return Promise.resolve(signatureResult(false))
  const [digest, keyInput] = nodeVerifyArgs(key.algorithm, keyObject)
  return new Promise(resolve => {
    try {
      c.verify(digest, message, keyInput, bytes, (err, ok) => resolve(signatureResult(err === null && ok)))
    } catch {
      resolve(signatureResult(false))
    }
  })
}

/** The parsed key and signature, or the result that says why they cannot verify. */
function parseKeyAndSignature(publicKey: string, signature: string): { result: VerifySignatureResult } | { key: ParsedKey; sig: ParsedSignature } {
  const key = parsePublicKey(publicKey)
  if ('error' in key) return { result: { valid: false, reason: key.error } }
  const sig = parseSignature(signature, key)
  if ('error' in sig) return { result: { valid: false, reason: sig.error } }
  return { key, sig }
}

/** node:crypto's digest and key arguments for a verification: none and the key for Ed25519, SHA-2 and DER for ECDSA. */
function nodeVerifyArgs(algorithm: KeyAlgorithm, keyObject: KeyObject): [string | null, KeyObject | { key: KeyObject; dsaEncoding: 'der' }] {
  return algorithm === 'ed25519' ? [null, keyObject] : [DIGEST[algorithm], { key: keyObject, dsaEncoding: 'der' }]
}

function signatureResult(ok: boolean): VerifySignatureResult {
  return ok ? { valid: true } : { valid: false, reason: 'signature does not verify' }
}

function cachedKeyObject(c: NonNullable<typeof nodeCrypto>, { wire, algorithm, bytes: keyBytes }: ClassicalKey): KeyObject | null {
  let keyObject = keyCache.get(wire)
  if (keyObject === undefined) {
    keyObject = toKeyObject(c, algorithm, keyBytes)
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value as string)
    keyCache.set(wire, keyObject)
  }
  return keyObject
}

function verifyNode(key: ClassicalKey, message: Uint8Array, sig: Uint8Array): boolean {
  const c = nodeCrypto as NonNullable<typeof nodeCrypto>
  const keyObject = cachedKeyObject(c, key)
  if (keyObject === null) return false
  try {
    const [digest, keyInput] = nodeVerifyArgs(key.algorithm, keyObject)
    return c.verify(digest, message, keyInput, sig)
  } catch {
    return false
  }
}

function toKeyObject(c: NonNullable<typeof nodeCrypto>, algorithm: KeyAlgorithm, bytes: Uint8Array): KeyObject | null {
  try {
    if (algorithm === 'ed25519') {
      const der = new Uint8Array(ED25519_SPKI_PREFIX.length + 32)
      der.set(ED25519_SPKI_PREFIX)
      der.set(bytes, ED25519_SPKI_PREFIX.length)
      return c.createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' })
    }
    const half = (bytes.length - 1) / 2
    const b64 = (u: Uint8Array) => Buffer.from(u).toString('base64url')
    return c.createPublicKey({
      key: { kty: 'EC', crv: CURVE_NAME[algorithm], x: b64(bytes.subarray(1, 1 + half)), y: b64(bytes.subarray(1 + half)) },
      format: 'jwk',
    })
  } catch {
    return null
  }
}

function verifyNoble(algorithm: KeyAlgorithm, keyBytes: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    // RFC 8032 semantics (zip215 off) and high-S ECDSA accepted, both to match OpenSSL exactly.
    if (algorithm === 'ed25519') return ed.verify(sig, message, keyBytes, { zip215: false })
    const curve = algorithm === 'p256' ? p256 : p384
    return curve.verify(sig, message, keyBytes, { format: 'der', lowS: false, prehash: true })
  } catch {
    return false
  }
}
