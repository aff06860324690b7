// SHA-256 as lowercase hex, over UTF-8 text or bytes.
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { type CryptoBackendName, defaultBackend, nodeCrypto } from './crypto-backend.js'
import { bytesToHex, utf8 } from './hex.js'

const oneShot = typeof nodeCrypto?.hash === 'function' ? nodeCrypto.hash.bind(nodeCrypto) : undefined

/** SHA-256 hex digest of a string (as UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array, backend: CryptoBackendName = defaultBackend): string {
  if (backend === 'node' && nodeCrypto !== undefined) {
    // the one-shot crypto.hash (Node >= 20.12) skips the Hash object: ~1 µs less per call, 3 calls per evaluation
    if (oneShot !== undefined) return oneShot('sha256', data, 'hex')
    return nodeCrypto.createHash('sha256').update(data).digest('hex')
  }
  return bytesToHex(nobleSha256(typeof data === 'string' ? utf8(data) : data))
}

/** SHA-256 digest bytes of `data` (RFC 6962 tree hashing hashes raw bytes, millions of times in an audit). */
export function sha256Bytes(data: Uint8Array, backend: CryptoBackendName = defaultBackend): Uint8Array {
  if (backend === 'node' && nodeCrypto !== undefined) {
    if (oneShot !== undefined) return oneShot('sha256', data, 'buffer') as unknown as Uint8Array
    return nodeCrypto.createHash('sha256').update(data).digest()
  }
  return nobleSha256(data)
}
