// Signers hold a private key and expose only `sign`: the key never leaves the object. Signing uses
// node:crypto with a cached KeyObject (measured here ~10x faster than pure JS); an Ed25519 signer on
// @noble/ed25519 exists for runtimes without node:crypto and to cross-check the backends in tests. A
// hybrid signer (spec 03) signs the same message with a classical key and with ML-DSA-65
// (@noble/post-quantum, FIPS 204, hedged signing) and joins both signatures.
import * as ed from '@noble/ed25519'
import { p256, p384 } from '@noble/curves/nist.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { type CryptoBackendName, defaultBackend, nodeCrypto } from './crypto-backend.js'
import { bytesToHex, hexToBytes } from './hex.js'
import { classicalOf, type HybridAlgSet, type KeyAlgorithm, type SigningAlgorithm } from './keys.js'
import { InvalidKeyError } from '../errors.js'
import './verify-signature.js' // configures @noble/ed25519's sha512

export interface Signer {
  readonly algorithm: SigningAlgorithm
  /** Wire form of the public key: bare hex (Ed25519), `p256:` / `p384:` + uncompressed point hex, or `hybrid:…`. */
  readonly publicKey: string
  /** Signs `message`; returns the wire-form signature. */
  sign(message: Uint8Array): string
}

export interface SignerOptions {
  algorithm?: KeyAlgorithm
  /** Ed25519: the 32-byte seed. P-256/P-384: the private scalar, big-endian (32 / 48 bytes). */
  secret: Uint8Array
  backend?: CryptoBackendName
}

const ED25519_PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
])
const SECRET_BYTES: Record<KeyAlgorithm, number> = { ed25519: 32, p256: 32, p384: 48 }

/** Creates a signer from secret key bytes. */
export function createSigner(options: SignerOptions): Signer {
  const algorithm = options.algorithm ?? 'ed25519'
  const backend = options.backend ?? defaultBackend
  if (!Object.hasOwn(SECRET_BYTES, algorithm)) throw new InvalidKeyError('algorithm', `${String(algorithm)} is not ed25519, p256 or p384 (a hybrid key: createHybridSigner)`)
  const secret = Uint8Array.from(options.secret)
  if (secret.length !== SECRET_BYTES[algorithm]) {
    throw new InvalidKeyError(`${algorithm} secret`, `expected ${SECRET_BYTES[algorithm]} bytes, got ${secret.length}`)
  }
  if (backend === 'node' && nodeCrypto !== undefined) return createNodeSigner(algorithm, secret)
  return createNobleSigner(algorithm, secret)
}

/** Bytes of an ML-DSA-65 key generation seed (FIPS 204 ξ). */
export const MLDSA65_SEED_BYTES = 32

export interface HybridSignerOptions {
  algSet: HybridAlgSet
  /** The classical secret, as `createSigner` takes it for the alg_set's curve. */
  classicalSecret: Uint8Array
  /** The 32-byte ML-DSA-65 key generation seed. */
  mldsaSeed: Uint8Array
  backend?: CryptoBackendName
}

/**
 * Creates a hybrid signer: key `hybrid:<classical-hex>:<mldsa65-hex>:<alg_set>` and signatures of the same
 * form, the classical half in bare hex (the alg_set names its curve).
 */
export function createHybridSigner(options: HybridSignerOptions): Signer {
  const classical = createSigner({ algorithm: classicalOf(options.algSet), secret: options.classicalSecret, backend: options.backend })
  if (!(options.mldsaSeed instanceof Uint8Array) || options.mldsaSeed.length !== MLDSA65_SEED_BYTES) {
    throw new InvalidKeyError('ML-DSA-65 seed', `expected ${MLDSA65_SEED_BYTES} bytes`)
  }
  const { publicKey, secretKey } = ml_dsa65.keygen(Uint8Array.from(options.mldsaSeed))
  const bare = (wire: string) => wire.slice(wire.indexOf(':') + 1)
  const classicalKey = classical.algorithm === 'ed25519' ? classical.publicKey : bare(classical.publicKey)
  return Object.freeze({
    algorithm: 'hybrid' as const,
    publicKey: `hybrid:${classicalKey}:${bytesToHex(publicKey)}:${options.algSet}`,
    sign(message: Uint8Array): string {
      const first = classical.sign(message)
      const second = ml_dsa65.sign(message, secretKey)
      return `hybrid:${classical.algorithm === 'ed25519' ? first : bare(first)}:${bytesToHex(second)}:${options.algSet}`
    },
  })
}

/** Creates an Ed25519 signer from a 64-character hex seed. */
export function createSignerFromSeedHex(seedHex: string, backend?: CryptoBackendName): Signer {
  const seed = hexToBytes(seedHex.trim().toLowerCase())
  if (seed === undefined || seed.length !== 32) throw new InvalidKeyError('Ed25519 seed', 'expected 64 hex characters')
  return createSigner({ algorithm: 'ed25519', secret: seed, backend })
}

/** Fresh random secret bytes for `algorithm`. */
export function generateSecret(algorithm: KeyAlgorithm = 'ed25519'): Uint8Array {
  if (algorithm === 'ed25519') return randomBytes(32)
  return (algorithm === 'p256' ? p256 : p384).utils.randomSecretKey()
}

/** The wire-form public key for a secret, without keeping a signer around. */
export function publicKeyFor(secret: Uint8Array, algorithm: KeyAlgorithm = 'ed25519'): string {
  return createSigner({ algorithm, secret }).publicKey
}

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n)
  globalThis.crypto.getRandomValues(out)
  return out
}

function createNodeSigner(algorithm: KeyAlgorithm, secret: Uint8Array): Signer {
  const c = nodeCrypto as NonNullable<typeof nodeCrypto>
  let privateKey
  try {
    if (algorithm === 'ed25519') {
      const der = new Uint8Array(ED25519_PKCS8_PREFIX.length + 32)
      der.set(ED25519_PKCS8_PREFIX)
      der.set(secret, ED25519_PKCS8_PREFIX.length)
      privateKey = c.createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' })
    } else {
      const curve = algorithm === 'p256' ? p256 : p384
      const point = curve.getPublicKey(secret, false)
      const half = (point.length - 1) / 2
      const b64 = (u: Uint8Array) => Buffer.from(u).toString('base64url')
      privateKey = c.createPrivateKey({
        key: {
          kty: 'EC',
          crv: algorithm === 'p256' ? 'P-256' : 'P-384',
          d: b64(secret),
          x: b64(point.subarray(1, 1 + half)),
          y: b64(point.subarray(1 + half)),
        },
        format: 'jwk',
      })
    }
  } catch (err) {
    throw new InvalidKeyError(`${algorithm} secret`, 'not a valid private key', err)
  }
  const publicKey = wirePublicKey(algorithm, c.createPublicKey(privateKey))
  if (algorithm === 'ed25519') {
    return Object.freeze({
      algorithm,
      publicKey,
      sign: (message: Uint8Array) => c.sign(null, message, privateKey).toString('hex'),
    })
  }
  const digest = algorithm === 'p256' ? 'sha256' : 'sha384'
  return Object.freeze({
    algorithm,
    publicKey,
    sign: (message: Uint8Array) => `${algorithm}:${c.sign(digest, message, { key: privateKey, dsaEncoding: 'der' }).toString('hex')}`,
  })
}

function wirePublicKey(algorithm: KeyAlgorithm, key: import('node:crypto').KeyObject): string {
  if (algorithm === 'ed25519') {
    const der = key.export({ format: 'der', type: 'spki' })
    return der.subarray(der.length - 32).toString('hex')
  }
  const jwk = key.export({ format: 'jwk' })
  const x = Buffer.from(jwk.x as string, 'base64url')
  const y = Buffer.from(jwk.y as string, 'base64url')
  return `${algorithm}:04${x.toString('hex')}${y.toString('hex')}`
}

function createNobleSigner(algorithm: KeyAlgorithm, secret: Uint8Array): Signer {
  if (algorithm === 'ed25519') {
    const publicKey = bytesToHex(ed.getPublicKey(secret))
    return Object.freeze({ algorithm, publicKey, sign: (m: Uint8Array) => bytesToHex(ed.sign(m, secret)) })
  }
  const curve = algorithm === 'p256' ? p256 : p384
  const publicKey = `${algorithm}:${bytesToHex(curve.getPublicKey(secret, false))}`
  return Object.freeze({
    algorithm,
    publicKey,
    sign: (m: Uint8Array) => `${algorithm}:${bytesToHex(curve.sign(m, secret, { format: 'der', prehash: true }))}`,
  })
}
