// RFC 6962 / RFC 9162 tree hashing (section 2.1.1): a leaf hashes as SHA-256(0x00 || data), an inner
// node as SHA-256(0x01 || left || right), and the empty tree as SHA-256 of zero bytes. The distinct
// prefixes keep a leaf from ever being passed off as an inner node (second-preimage resistance).
//
// Gate's leaves are receipt ids in commit order, and a leaf's data is the 32 bytes the id's 64 lowercase
// hex characters encode (not the hex text): docs/transparency.md.
import { sha256Bytes } from '../protocol/sha256.js'
import { bytesToHex, hexToBytes } from '../protocol/hex.js'
import { MalformedTreeInputError } from '../errors.js'

/** Bytes of every hash in the tree. */
export const HASH_BYTES = 32

const LEAF_PREFIX = 0x00
const NODE_PREFIX = 0x01
const RECEIPT_ID = /^[0-9a-f]{64}$/

/** The root of the empty tree: SHA-256 of zero bytes. */
export function emptyTreeRoot(): Uint8Array {
  return sha256Bytes(new Uint8Array(0))
}

/** SHA-256(0x00 || data). */
export function hashLeaf(data: Uint8Array): Uint8Array {
  const input = new Uint8Array(data.length + 1)
  input[0] = LEAF_PREFIX
  input.set(data, 1)
  return sha256Bytes(input)
}

/** SHA-256(0x01 || left || right). */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = new Uint8Array(1 + left.length + right.length)
  input[0] = NODE_PREFIX
  input.set(left, 1)
  input.set(right, 1 + left.length)
  return sha256Bytes(input)
}

/** The leaf data of a receipt: the 32 bytes its lowercase hex id encodes. */
export function receiptLeafData(receiptId: string): Uint8Array {
  if (typeof receiptId !== 'string' || !RECEIPT_ID.test(receiptId)) throw new MalformedTreeInputError('receipt id', '64 lowercase hex characters', receiptId)
  return hexToBytes(receiptId)!
}

/** The leaf hash of a receipt id: SHA-256(0x00 || 32 id bytes). */
export function receiptLeafHash(receiptId: string): Uint8Array {
  return hashLeaf(receiptLeafData(receiptId))
}

/** Lowercase hex of a hash. */
export function hashToHex(hash: Uint8Array): string {
  return bytesToHex(hash)
}

/** A 64-hex hash as bytes, or undefined when it is not one. */
export function hexToHash(hex: unknown): Uint8Array | undefined {
  if (typeof hex !== 'string' || !RECEIPT_ID.test(hex)) return undefined
  return hexToBytes(hex)
}

/** Constant-time-irrelevant equality of two hashes (they are public values). */
export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
