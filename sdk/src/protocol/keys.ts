// Wire forms of public keys and signatures (spec 02, Versioning; spec 03, Capability token): Ed25519 as
// bare hex, P-256 and P-384 as `p256:` / `p384:` + hex (uncompressed SEC1 point; DER signature), and the
// hybrid form `hybrid:<classical-hex>:<mldsa65-hex>:<alg_set>`, whose classical part is the bare hex of
// the classical key or signature (the alg_set names its curve) and whose second part is ML-DSA-65's
// (FIPS 204) public key or signature.
import { hexToBytes } from './hex.js'

/** A classical signature algorithm. */
export type KeyAlgorithm = 'ed25519' | 'p256' | 'p384'

/** Every algorithm a Gate key signs with: a classical one, or `hybrid` (a classical key with ML-DSA-65). */
export type SigningAlgorithm = KeyAlgorithm | 'hybrid'

/** The `alg_set` of a hybrid key or signature (spec 03). */
export type HybridAlgSet = 'ed25519+mldsa65' | 'p256+mldsa65' | 'p384+mldsa65'

export const HYBRID_ALG_SETS: readonly HybridAlgSet[] = Object.freeze(['ed25519+mldsa65', 'p256+mldsa65', 'p384+mldsa65'])

/** Bytes of an ML-DSA-65 public key and signature (FIPS 204, Table 2). */
export const MLDSA65_PUBLIC_KEY_BYTES = 1952
export const MLDSA65_SIGNATURE_BYTES = 3309

export interface ClassicalKey {
  algorithm: KeyAlgorithm
  bytes: Uint8Array
  /** Its own wire form (bare or `p256:` / `p384:` hex), also for the classical half of a hybrid key. */
  wire: string
}

export interface HybridKey {
  algorithm: 'hybrid'
  algSet: HybridAlgSet
  classical: ClassicalKey
  /** The ML-DSA-65 public key. */
  mldsa: Uint8Array
}

export type ParsedKey = ClassicalKey | HybridKey

/** A parsed signature: the classical bytes, or both halves of a hybrid one. */
export type ParsedSignature = { algorithm: KeyAlgorithm; bytes: Uint8Array } | { algorithm: 'hybrid'; classical: Uint8Array; mldsa: Uint8Array }

const POINT_BYTES: Record<'p256' | 'p384', number> = { p256: 65, p384: 97 }

/** The classical algorithm of a hybrid alg_set. */
export function classicalOf(algSet: HybridAlgSet): KeyAlgorithm {
  return algSet.slice(0, algSet.indexOf('+')) as KeyAlgorithm
}

/** True when `s` is one of the three spec 03 alg_set strings. */
export function isHybridAlgSet(s: unknown): s is HybridAlgSet {
  return typeof s === 'string' && (HYBRID_ALG_SETS as readonly string[]).includes(s)
}

/** Parses a wire public key, or returns a reason it is not one. */
export function parsePublicKey(key: unknown): ParsedKey | { error: string } {
  if (typeof key !== 'string') return { error: 'key is not a string' }
  if (key.startsWith('hybrid:')) {
    const parts = splitHybrid(key)
    if ('error' in parts) return parts
    const classical = classicalKey(classicalOf(parts.algSet), parts.classical)
    if ('error' in classical) return { error: `the classical half of the hybrid key: ${classical.error}` }
    const mldsa = hexToBytes(parts.mldsa)
    if (mldsa === undefined || mldsa.length !== MLDSA65_PUBLIC_KEY_BYTES) return { error: `the ML-DSA-65 half of a hybrid key is ${MLDSA65_PUBLIC_KEY_BYTES} bytes of lowercase hex` }
    return { algorithm: 'hybrid', algSet: parts.algSet, classical, mldsa }
  }
  const { algorithm, hex } = splitPrefix(key)
  return classicalKey(algorithm, hex)
}

/** Parses a wire signature for `key`, or returns a reason it is not one of its form. */
export function parseSignature(sig: unknown, key: ParsedKey | SigningAlgorithm): ParsedSignature | { error: string } {
  if (typeof sig !== 'string') return { error: 'signature is not a string' }
  const algorithm = typeof key === 'string' ? key : key.algorithm
  if (algorithm === 'hybrid') {
    if (!sig.startsWith('hybrid:')) return { error: 'a hybrid key needs a hybrid signature (both halves)' }
    const parts = splitHybrid(sig)
    if ('error' in parts) return parts
    if (typeof key !== 'string' && key.algorithm === 'hybrid' && parts.algSet !== key.algSet) {
      return { error: `signature alg_set ${parts.algSet} does not match the key's ${key.algSet}` }
    }
    const classical = classicalSignature(classicalOf(parts.algSet), parts.classical)
    if ('error' in classical) return { error: `the classical half of the hybrid signature: ${classical.error}` }
    const mldsa = hexToBytes(parts.mldsa)
    if (mldsa === undefined || mldsa.length !== MLDSA65_SIGNATURE_BYTES) return { error: `the ML-DSA-65 half of a hybrid signature is ${MLDSA65_SIGNATURE_BYTES} bytes of lowercase hex` }
    return { algorithm: 'hybrid', classical, mldsa }
  }
  if (sig.startsWith('hybrid:')) return { error: `a hybrid signature does not verify with a ${algorithm} key` }
  const split = splitPrefix(sig)
  if (split.algorithm !== algorithm) return { error: `signature algorithm ${split.algorithm} does not match key algorithm ${algorithm}` }
  const bytes = classicalSignature(algorithm, split.hex)
  return 'error' in bytes ? bytes : { algorithm, bytes }
}

/** The algorithm a wire key or signature string names by its prefix. */
export function algorithmOf(wire: string): SigningAlgorithm | undefined {
  if (wire.startsWith('hybrid:')) return 'hybrid'
  if (wire.startsWith('p256:')) return 'p256'
  if (wire.startsWith('p384:')) return 'p384'
  return wire.includes(':') ? undefined : 'ed25519'
}

function classicalKey(algorithm: KeyAlgorithm, hex: string): ClassicalKey | { error: string } {
  const bytes = hexToBytes(hex)
  if (bytes === undefined) return { error: 'key is not lowercase hex' }
  if (algorithm === 'ed25519') {
    if (bytes.length !== 32) return { error: `an Ed25519 key is 32 bytes, got ${bytes.length}` }
  } else if (bytes.length !== POINT_BYTES[algorithm] || bytes[0] !== 0x04) {
    return { error: `a ${algorithm} key is an uncompressed ${POINT_BYTES[algorithm]}-byte SEC1 point` }
  }
  return { algorithm, bytes, wire: algorithm === 'ed25519' ? hex : `${algorithm}:${hex}` }
}

function classicalSignature(algorithm: KeyAlgorithm, hex: string): Uint8Array | { error: string } {
  const bytes = hexToBytes(hex)
  if (bytes === undefined) return { error: 'signature is not lowercase hex' }
  if (algorithm === 'ed25519' && bytes.length !== 64) return { error: `an Ed25519 signature is 64 bytes, got ${bytes.length}` }
  if (algorithm !== 'ed25519' && (bytes.length < 8 || bytes.length > 160 || bytes[0] !== 0x30)) {
    return { error: 'an ECDSA signature is DER-encoded' }
  }
  return bytes
}

// `hybrid:<classical>:<mldsa>:<alg_set>`: exactly four colon-separated parts, the last a known alg_set
function splitHybrid(wire: string): { classical: string; mldsa: string; algSet: HybridAlgSet } | { error: string } {
  const parts = wire.split(':')
  if (parts.length !== 4) return { error: 'a hybrid key or signature is hybrid:<classical-hex>:<mldsa65-hex>:<alg_set>' }
  const algSet = parts[3]
  if (!isHybridAlgSet(algSet)) return { error: `unknown hybrid alg_set ${JSON.stringify(algSet)} (expected one of ${HYBRID_ALG_SETS.join(', ')})` }
  return { classical: parts[1]!, mldsa: parts[2]!, algSet }
}

function splitPrefix(wire: string): { algorithm: KeyAlgorithm; hex: string } {
  if (wire.startsWith('p256:')) return { algorithm: 'p256', hex: wire.slice(5) }
  if (wire.startsWith('p384:')) return { algorithm: 'p384', hex: wire.slice(5) }
  return { algorithm: 'ed25519', hex: wire }
}
