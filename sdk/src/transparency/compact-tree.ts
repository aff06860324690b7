// An append-only Merkle tree kept as its compact frontier: the roots of the perfect subtrees the
// binary decomposition of its size names (at most 53 hashes for any safe-integer size). Appending a
// leaf merges equal-sized subtrees on the right edge, as a binary counter carries, and reports every
// perfect subtree it completes so a store can keep them for proofs (merkle-proofs.ts). The root folds
// the frontier right to left, which is exactly RFC 6962's MTH for a size that is not a power of two.
import { MalformedTreeInputError } from '../errors.js'
import { emptyTreeRoot, hashChildren } from './merkle-hash.js'

/** A perfect subtree: the 2^level leaves starting at index * 2^level. */
export interface TreeNodeRef {
  level: number
  index: number
}

/** A perfect subtree and its hash. */
export interface TreeNode extends TreeNodeRef {
  hash: Uint8Array
}

/** The perfect subtrees that make up a tree of `size` leaves, left (largest) to right. */
export function frontierRefs(size: number): TreeNodeRef[] {
  checkSize('tree size', size)
  const refs: TreeNodeRef[] = []
  let offset = 0
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level
    if (Math.floor(size / width) % 2 === 1) {
      refs.push({ level, index: offset / width })
      offset += width
    }
  }
  return refs
}

/** The tree over the leaves appended so far, as its frontier. */
export class CompactMerkleTree {
  #size: number
  // frontier hashes, left (largest subtree) to right
  readonly #frontier: Uint8Array[]

  constructor(size = 0, frontier: readonly Uint8Array[] = []) {
    checkSize('tree size', size)
    if (frontier.length !== frontierRefs(size).length) {
      throw new MalformedTreeInputError('frontier', `${frontierRefs(size).length} hashes for size ${size}`, `${frontier.length} hashes`)
    }
    this.#size = size
    this.#frontier = frontier.map(h => Uint8Array.from(h))
  }

  get size(): number {
    return this.#size
  }

  /** The frontier hashes, left to right (see `frontierRefs` for their positions). */
  frontier(): Uint8Array[] {
    return this.#frontier.map(h => Uint8Array.from(h))
  }

  /** Appends one leaf hash; `onNode` receives the leaf and every perfect subtree it completes, lowest first. */
  append(leafHash: Uint8Array, onNode?: (node: TreeNode) => void): void {
    let hash = leafHash
    let level = 0
    let index = this.#size
    onNode?.({ level, index, hash })
    // each set low bit of the old size is a subtree of this level waiting for its right sibling
    let carry = this.#size
    while (carry % 2 === 1) {
      hash = hashChildren(this.#frontier.pop()!, hash)
      level++
      index = Math.floor(index / 2)
      carry = Math.floor(carry / 2)
      onNode?.({ level, index, hash })
    }
    this.#frontier.push(hash)
    this.#size++
  }

  /** The RFC 6962 root (MTH) of the leaves so far. */
  root(): Uint8Array {
    if (this.#size === 0) return emptyTreeRoot()
    let acc = this.#frontier[this.#frontier.length - 1]!
    for (let i = this.#frontier.length - 2; i >= 0; i--) acc = hashChildren(this.#frontier[i]!, acc)
    return acc
  }
}

function checkSize(what: string, size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new MalformedTreeInputError(what, 'a non-negative safe integer', size)
}
