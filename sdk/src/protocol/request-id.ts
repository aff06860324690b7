// UUIDv7 request ids (spec 02 recommends them): time-ordered, so receipts sort by creation.
import { bytesToHex } from './hex.js'

let lastMs = 0
let seq = 0

// Random bytes are drawn 4 KiB at a time: one getRandomValues call costs about as much as the rest of
// an id (it is made for every request the middleware sends).
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolOffset = POOL_BYTES

function randomBytes16(): Uint8Array {
  if (poolOffset + 16 > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    poolOffset = 0
  }
  // a copy: the id is built in place
  const bytes = pool.slice(poolOffset, poolOffset + 16)
  poolOffset += 16
  return bytes
}

/** A new UUIDv7 string. */
export function uuidv7(now: number = Date.now()): string {
  const bytes = randomBytes16()
  // monotonic within one millisecond: bump a 12-bit counter in rand_a
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff
    if (seq === 0) lastMs++
    now = lastMs
  } else {
    lastMs = now
    seq = bytes[6]! & 0x0f
  }
  bytes[0] = (now / 2 ** 40) & 0xff
  bytes[1] = (now / 2 ** 32) & 0xff
  bytes[2] = (now >>> 24) & 0xff
  bytes[3] = (now >>> 16) & 0xff
  bytes[4] = (now >>> 8) & 0xff
  bytes[5] = now & 0xff
  bytes[6] = 0x70 | ((seq >>> 8) & 0x0f)
  bytes[7] = seq & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = bytesToHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
