// Wire forms of public keys and signatures (spec 02, Versioning): Ed25519 as bare hex, P-256 and
// P-384 as `p256:` / `p384:` + hex (uncompressed SEC1 point; DER signature).
import { hexToBytes } from './hex.js'

export type KeyAlgorithm = 'ed25519' | 'p256' | 'p384'

export interface ParsedKey {
  algorithm: KeyAlgorithm
  bytes: Uint8Array
}

const POINT_BYTES: Record<'p256' | 'p384', number> = { p256: 65, p384: 97 }

/** Parses a wire public key, or returns a reason it is not one. */
export function parsePublicKey(key: unknown): ParsedKey | { error: string } {
  if (typeof key !== 'string') return { error: 'key is not a string' }
  if (key.startsWith('hybrid:')) return { error: 'hybrid (ML-DSA) keys are not supported by this verifier' }
  const { algorithm, hex } = splitPrefix(key)
  const bytes = hexToBytes(hex)
  if (bytes === undefined) return { error: 'key is not lowercase hex' }
  if (algorithm === 'ed25519') {
    if (bytes.length !== 32) return { error: `an Ed25519 key is 32 bytes, got ${bytes.length}` }
  } else if (bytes.length !== POINT_BYTES[algorithm] || bytes[0] !== 0x04) {
    return { error: `a ${algorithm} key is an uncompressed ${POINT_BYTES[algorithm]}-byte SEC1 point` }
  }
  return { algorithm, bytes }
}

/** Parses a wire signature for the given key algorithm, or returns a reason it is not one. */
export function parseSignature(sig: unknown, algorithm: KeyAlgorithm): Uint8Array | { error: string } {
  if (typeof sig !== 'string') return { error: 'signature is not a string' }
  const split = splitPrefix(sig)
  if (split.algorithm !== algorithm) return { error: `signature algorithm ${split.algorithm} does not match key algorithm ${algorithm}` }
  const bytes = hexToBytes(split.hex)
  if (bytes === undefined) return { error: 'signature is not lowercase hex' }
  if (algorithm === 'ed25519' && bytes.length !== 64) return { error: `an Ed25519 signature is 64 bytes, got ${bytes.length}` }
  if (algorithm !== 'ed25519' && (bytes.length < 8 || bytes.length > 160 || bytes[0] !== 0x30)) {
    return { error: 'an ECDSA signature is DER-encoded' }
  }
  return bytes
}

/** The algorithm a wire key or signature string names by its prefix. */
export function algorithmOf(wire: string): KeyAlgorithm | 'hybrid' | undefined {
  if (wire.startsWith('hybrid:')) return 'hybrid'
  if (wire.startsWith('p256:')) return 'p256'
  if (wire.startsWith('p384:')) return 'p384'
  return wire.includes(':') ? undefined : 'ed25519'
}

function splitPrefix(wire: string): { algorithm: KeyAlgorithm; hex: string } {
  if (wire.startsWith('p256:')) return { algorithm: 'p256', hex: wire.slice(5) }
  if (wire.startsWith('p384:')) return { algorithm: 'p384', hex: wire.slice(5) }
  return { algorithm: 'ed25519', hex: wire }
}
