// Hex helpers. Wire hashes and keys are lowercase hex; parsing is strict (even length, [0-9a-f]).

const LOWER_HEX_64 = /^[0-9a-f]{64}$/

/** True when `s` is a 64-character lowercase hex digest (spec 02: `content_hash`). */
export function isSha256Hex(s: unknown): s is string {
  return typeof s === 'string' && LOWER_HEX_64.test(s)
}

// nibble value of each lowercase hex digit's char code, -1 for every other code below 128
const NIBBLE = Int8Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1))

/** Decodes lowercase hex; returns undefined for anything else. */
export function hexToBytes(s: string): Uint8Array | undefined {
  if (s.length % 2 !== 0) return undefined
  const out = new Uint8Array(s.length / 2)
  for (let i = 0; i < out.length; i++) {
    const hi = s.charCodeAt(2 * i)
    const lo = s.charCodeAt(2 * i + 1)
    const h = hi < 128 ? NIBBLE[hi]! : -1
    const l = lo < 128 ? NIBBLE[lo]! : -1
    if (h < 0 || l < 0) return undefined
    out[i] = (h << 4) | l
  }
  return out
}

const TABLE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

export function bytesToHex(b: Uint8Array): string {
  let s = ''
  for (let i = 0; i < b.length; i++) s += TABLE[b[i] as number]
  return s
}

const encoder = new TextEncoder()

export function utf8(s: string): Uint8Array {
  return encoder.encode(s)
}
