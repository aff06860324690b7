// Hex helpers. Wire hashes and keys are lowercase hex; parsing is strict (even length, [0-9a-f]).

const HEX = /^(?:[0-9a-f]{2})*$/
const LOWER_HEX_64 = /^[0-9a-f]{64}$/

/** True when `s` is a 64-character lowercase hex digest (spec 02: `content_hash`). */
export function isSha256Hex(s: unknown): s is string {
  return typeof s === 'string' && LOWER_HEX_64.test(s)
}

/** Decodes lowercase hex; returns undefined for anything else. */
export function hexToBytes(s: string): Uint8Array | undefined {
  if (!HEX.test(s)) return undefined
  const out = new Uint8Array(s.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16)
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
