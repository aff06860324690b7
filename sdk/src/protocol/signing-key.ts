// Gate's signing key file (`gate keygen`, `--authority-seed-file`): one line of text naming the
// algorithm by the same prefixes as the public key forms (spec 02 Versioning, spec 03 hybrid form):
//
//   <64 hex>                                  Ed25519 seed (the original seed file, unchanged)
//   p256:<64 hex>                             P-256 private scalar, big-endian
//   p384:<96 hex>                             P-384 private scalar, big-endian
//   hybrid:<classical hex>:<64 hex>:<alg_set> the alg_set's classical secret (as above, bare), then the
//                                             32-byte ML-DSA-65 key generation seed (FIPS 204 ξ)
//
// Lowercase hex; surrounding whitespace (the trailing newline) is ignored. Stores keep a key as bytes
// (`signingKeyBytes`): an Ed25519 key as its 32 raw seed bytes, as before, and any other as the UTF-8
// of its key file line, which is never 32 bytes long, so the two cannot be confused.
import { InvalidKeyError } from '../errors.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { bytesToHex, hexToBytes, utf8 } from './hex.js'
import { classicalOf, HYBRID_ALG_SETS, isHybridAlgSet, type HybridAlgSet, type KeyAlgorithm, type SigningAlgorithm } from './keys.js'
import { createHybridSigner, createSigner, generateSecret, MLDSA65_SEED_BYTES, type Signer } from './signer.js'

/** A private signing key of any algorithm Gate signs with. */
export type SigningKey =
  | { algorithm: KeyAlgorithm; secret: Uint8Array }
  | { algorithm: 'hybrid'; algSet: HybridAlgSet; classicalSecret: Uint8Array; mldsaSeed: Uint8Array }

/** What `gate keygen --algorithm` accepts: an algorithm, or a hybrid alg_set (`hybrid` alone is `ed25519+mldsa65`). */
export type KeyAlgorithmName = SigningAlgorithm | HybridAlgSet

export const KEY_ALGORITHM_NAMES: readonly KeyAlgorithmName[] = Object.freeze(['ed25519', 'p256', 'p384', 'hybrid', ...HYBRID_ALG_SETS])

const SECRET_HEX: Record<KeyAlgorithm, number> = { ed25519: 64, p256: 64, p384: 96 }
const ED25519_SEED_BYTES = 32

/** A fresh random key. */
export function generateSigningKey(name: KeyAlgorithmName = 'ed25519'): SigningKey {
  if (name === 'hybrid' || isHybridAlgSet(name)) {
    const algSet: HybridAlgSet = name === 'hybrid' ? 'ed25519+mldsa65' : name
    const mldsaSeed = new Uint8Array(MLDSA65_SEED_BYTES)
    globalThis.crypto.getRandomValues(mldsaSeed)
    return { algorithm: 'hybrid', algSet, classicalSecret: generateSecret(classicalOf(algSet)), mldsaSeed }
  }
  if (!Object.hasOwn(SECRET_HEX, name)) throw new InvalidKeyError('algorithm', `expected one of ${KEY_ALGORITHM_NAMES.join(', ')}, got ${JSON.stringify(name)}`)
  return { algorithm: name, secret: generateSecret(name) }
}

/** The key file line of `key` (without the newline). */
export function formatSigningKey(key: SigningKey): string {
  if (key.algorithm === 'hybrid') return `hybrid:${bytesToHex(key.classicalSecret)}:${bytesToHex(key.mldsaSeed)}:${key.algSet}`
  return key.algorithm === 'ed25519' ? bytesToHex(key.secret) : `${key.algorithm}:${bytesToHex(key.secret)}`
}

/** Parses a key file's text; throws InvalidKeyError naming what is wrong (never the secret). */
export function parseSigningKey(text: string): SigningKey {
  const line = text.trim().toLowerCase()
  if (line.startsWith('hybrid:')) {
    const parts = line.split(':')
    const algSet = parts[3]
    if (parts.length !== 4 || !isHybridAlgSet(algSet)) {
      throw new InvalidKeyError('hybrid key', `expected hybrid:<classical secret hex>:<64 hex ML-DSA-65 seed>:<alg_set>, alg_set one of ${HYBRID_ALG_SETS.join(', ')}`)
    }
    const classicalSecret = secretHex(classicalOf(algSet), parts[1]!)
    const mldsaSeed = hexToBytes(parts[2]!)
    if (mldsaSeed === undefined || mldsaSeed.length !== MLDSA65_SEED_BYTES) throw new InvalidKeyError('hybrid key', 'the ML-DSA-65 seed is 64 hex characters')
    return { algorithm: 'hybrid', algSet, classicalSecret, mldsaSeed }
  }
  const colon = line.indexOf(':')
  const algorithm = colon === -1 ? 'ed25519' : line.slice(0, colon)
  if (algorithm !== 'ed25519' && algorithm !== 'p256' && algorithm !== 'p384') {
    throw new InvalidKeyError('key file', `unknown algorithm prefix ${JSON.stringify(algorithm)} (expected none for Ed25519, p256:, p384: or hybrid:)`)
  }
  if (colon !== -1 && algorithm === 'ed25519') throw new InvalidKeyError('key file', 'an Ed25519 seed is bare hex, without a prefix')
  return { algorithm, secret: secretHex(algorithm, colon === -1 ? line : line.slice(colon + 1)) }
}

function secretHex(algorithm: KeyAlgorithm, hex: string): Uint8Array {
  const bytes = hexToBytes(hex)
  if (bytes === undefined || hex.length !== SECRET_HEX[algorithm]) {
    throw new InvalidKeyError(`${algorithm} secret`, `expected ${SECRET_HEX[algorithm]} hex characters${algorithm === 'ed25519' ? ' (an Ed25519 seed)' : ''}`)
  }
  return bytes
}

/** The signer of `key`. */
export function createSignerFromKey(key: SigningKey, backend?: CryptoBackendName): Signer {
  if (key.algorithm === 'hybrid') return createHybridSigner({ algSet: key.algSet, classicalSecret: key.classicalSecret, mldsaSeed: key.mldsaSeed, backend })
  return createSigner({ algorithm: key.algorithm, secret: key.secret, backend })
}

/** How stores keep `key`: an Ed25519 seed as its 32 bytes (as stores always have), any other as its key file line. */
export function signingKeyBytes(key: SigningKey): Uint8Array {
  return key.algorithm === 'ed25519' ? Uint8Array.from(key.secret) : utf8(formatSigningKey(key))
}

/** The key a store kept (`signingKeyBytes`); throws InvalidKeyError for anything else. */
export function signingKeyFromBytes(bytes: Uint8Array): SigningKey {
  if (!(bytes instanceof Uint8Array)) throw new InvalidKeyError('stored key', 'expected bytes')
  if (bytes.length === ED25519_SEED_BYTES) return { algorithm: 'ed25519', secret: Uint8Array.from(bytes) }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (err) {
    throw new InvalidKeyError('stored key', 'neither a 32-byte Ed25519 seed nor a key file line', err)
  }
  const key = parseSigningKey(text)
  if (key.algorithm === 'ed25519') throw new InvalidKeyError('stored key', 'an Ed25519 seed is stored as its 32 bytes')
  return key
}

/** The signer of stored key bytes (`signingKeyBytes`). */
export function createSignerFromKeyBytes(bytes: Uint8Array, backend?: CryptoBackendName): Signer {
  return createSignerFromKey(signingKeyFromBytes(bytes), backend)
}

/** The wire public key of stored key bytes. */
export function publicKeyOfKeyBytes(bytes: Uint8Array): string {
  return createSignerFromKeyBytes(bytes).publicKey
}
