// Proof verification exactly as RFC 9162 section 2.1.3.2 (inclusion) and 2.1.4.2 (consistency) state
// it. Sizes are safe integers: bit tests and shifts use arithmetic, since JavaScript's bit operators
// truncate to 32 bits and a log may outgrow that. Never throws for bad input: it answers false.
import { hashChildren, hashesEqual, HASH_BYTES } from './merkle-hash.js'

/** True when `proof` shows `leafHash` at `index` in the tree of `size` leaves whose root is `root`. */
export function verifyInclusion(leafHash: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!isCount(index) || !isCount(size) || index >= size) return false
  if (!isHash(leafHash) || !isHash(root) || !proof.every(isHash)) return false
  let fn = index
  let sn = size - 1
  let r = leafHash
  for (const p of proof) {
    if (sn === 0) return false
    if (isOdd(fn) || fn === sn) {
      r = hashChildren(p, r)
      ;[fn, sn] = shiftToOdd(fn, sn)
    } else {
      r = hashChildren(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && hashesEqual(r, root)
}

/** True when `proof` shows the tree of `first` leaves (root `firstRoot`) is a prefix of the tree of `second` leaves. */
export function verifyConsistency(first: number, second: number, proof: readonly Uint8Array[], firstRoot: Uint8Array, secondRoot: Uint8Array): boolean {
  if (!isCount(first) || !isCount(second) || first > second) return false
  if (!isHash(firstRoot) || !isHash(secondRoot) || !proof.every(isHash)) return false
  // Equal sizes: the roots must match and there is nothing to prove. An empty first tree is a prefix of
  // every tree, but says nothing (RFC 9162 defines proofs for 0 < first < second only): refused.
  if (first === second) return proof.length === 0 && hashesEqual(firstRoot, secondRoot)
  if (first === 0 || proof.length === 0) return false
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof]
  let fn = first - 1
  let sn = second - 1
  while (isOdd(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let fr = path[0]!
  let sr = path[0]!
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!
    if (sn === 0) return false
    if (isOdd(fn) || fn === sn) {
      fr = hashChildren(c, fr)
      sr = hashChildren(c, sr)
      ;[fn, sn] = shiftToOdd(fn, sn)
    } else {
      sr = hashChildren(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && hashesEqual(fr, firstRoot) && hashesEqual(sr, secondRoot)
}

// RFC 9162: "right-shift both fn and sn equally until either LSB(fn) is set or fn is 0"
function shiftToOdd(fn: number, sn: number): [number, number] {
  while (!isOdd(fn) && fn !== 0) {
    fn = half(fn)
    sn = half(sn)
  }
  return [fn, sn]
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0
}

function isHash(h: Uint8Array): boolean {
  return h instanceof Uint8Array && h.length === HASH_BYTES
}

function isOdd(n: number): boolean {
  return n % 2 === 1
}

function half(n: number): number {
  return Math.floor(n / 2)
}

function isPowerOfTwo(n: number): boolean {
  let k = 1
  while (k < n) k *= 2
  return k === n
}
