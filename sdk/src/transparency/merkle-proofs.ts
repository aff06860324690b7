// Proof generation (RFC 6962 section 2.1.1 PATH and SUBPROOF; RFC 9162 section 2.1.3.1 and 2.1.4.1)
// from stored perfect-subtree hashes. Every hash a proof needs is the MTH of a range [start, end) that
// the RFC's recursion produces, and such a range is always aligned: its binary decomposition is a run of
// perfect subtrees a store keeps (compact-tree.ts reports them). So a proof is planned first, as lists
// of node references, fetched in one batch, then folded.
import { MalformedTreeInputError } from '../errors.js'
import type { TreeNodeRef } from './compact-tree.js'
import { hashChildren } from './merkle-hash.js'

/** Where proofs read perfect-subtree hashes from (a store, or memory in tests). */
export interface TreeNodeReader {
  /** The hashes of `refs`, in order; rejects when one is not stored. */
  nodes(refs: readonly TreeNodeRef[]): Promise<Uint8Array[]>
}

/** A proof as a list of ranges, each the MTH of a run of perfect subtrees (left to right). */
export type ProofPlan = TreeNodeRef[][]

/** The perfect subtrees of [start, end), left to right; the MTH of the range folds them right to left. */
export function rangeRefs(start: number, end: number): TreeNodeRef[] {
  const refs: TreeNodeRef[] = []
  let offset = start
  let remaining = end - start
  for (let level = 52; level >= 0 && remaining > 0; level--) {
    const width = 2 ** level
    if (remaining >= width) {
      if (offset % width !== 0) throw new MalformedTreeInputError('range start', `aligned to ${width}`, offset)
      refs.push({ level, index: offset / width })
      offset += width
      remaining -= width
    }
  }
  return refs
}

/** The inclusion path of leaf `index` in the tree of the first `size` leaves, leaf to root. */
export function planInclusionProof(index: number, size: number): ProofPlan {
  checkPosition('tree size', size, 1)
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new MalformedTreeInputError('leaf index', `an integer in 0..${size - 1}`, index)
  const plan: ProofPlan = []
  let start = 0
  let end = size
  // descend from the root, collecting siblings root-first, then reverse to leaf-first
  while (end - start > 1) {
    const k = largestPowerOfTwoBelow(end - start)
    if (index < start + k) {
      plan.push(rangeRefs(start + k, end))
      end = start + k
    } else {
      plan.push(rangeRefs(start, start + k))
      start += k
    }
  }
  return plan.reverse()
}

/** The consistency proof between the trees of the first `first` and `second` leaves (empty when equal). */
export function planConsistencyProof(first: number, second: number): ProofPlan {
  checkPosition('first tree size', first, 0)
  checkPosition('second tree size', second, 0)
  if (first > second) throw new MalformedTreeInputError('first tree size', `at most the second (${second})`, first)
  if (first === 0 || first === second) return []
  const plan: ProofPlan = []
  let start = 0
  let end = second
  let m = first
  let whole = true
  // SUBPROOF(m, D[start:end], whole), collected root-first
  while (m !== end - start) {
    const k = largestPowerOfTwoBelow(end - start)
    if (m <= k) {
      plan.push(rangeRefs(start + k, end))
      end = start + k
    } else {
      plan.push(rangeRefs(start, start + k))
      start += k
      m -= k
      whole = false
    }
  }
  if (!whole) plan.push(rangeRefs(start, end))
  return plan.reverse()
}

/** Fetches and folds a plan's hashes. */
export async function resolveProof(plan: ProofPlan, reader: TreeNodeReader): Promise<Uint8Array[]> {
  const refs = plan.flat()
  const hashes = refs.length === 0 ? [] : await reader.nodes(refs)
  if (hashes.length !== refs.length) throw new MalformedTreeInputError('node reader answer', `${refs.length} hashes`, `${hashes.length}`)
  let next = 0
  return plan.map(range => foldRange(hashes.slice(next, (next += range.length))))
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves. */
export async function inclusionProof(index: number, size: number, reader: TreeNodeReader): Promise<Uint8Array[]> {
  return resolveProof(planInclusionProof(index, size), reader)
}

/** The consistency proof from size `first` to size `second`. */
export async function consistencyProof(first: number, second: number, reader: TreeNodeReader): Promise<Uint8Array[]> {
  return resolveProof(planConsistencyProof(first, second), reader)
}

/** The root of the tree of the first `size` leaves, from stored nodes (the empty root is the caller's). */
export async function rootAt(size: number, reader: TreeNodeReader): Promise<Uint8Array> {
  checkPosition('tree size', size, 1)
  return foldRange(await reader.nodes(rangeRefs(0, size)))
}

// MTH of a run of perfect subtrees: fold right to left.
function foldRange(hashes: readonly Uint8Array[]): Uint8Array {
  let acc = hashes[hashes.length - 1]!
  for (let i = hashes.length - 2; i >= 0; i--) acc = hashChildren(hashes[i]!, acc)
  return acc
}

/** The largest power of two strictly below `n` (n >= 2). */
export function largestPowerOfTwoBelow(n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

function checkPosition(what: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new MalformedTreeInputError(what, `an integer >= ${min}`, value)
}
