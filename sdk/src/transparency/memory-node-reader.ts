// An in-memory TreeNodeReader over a list of leaf hashes: what tests and small tools prove against.
import { CompactMerkleTree, type TreeNodeRef } from './compact-tree.js'
import type { TreeNodeReader } from './merkle-proofs.js'

/** Every perfect subtree of `leafHashes`, kept in memory and served as a TreeNodeReader. */
export function createMemoryNodeReader(leafHashes: readonly Uint8Array[]): TreeNodeReader & { tree: CompactMerkleTree } {
  const nodes = new Map<string, Uint8Array>()
  const tree = new CompactMerkleTree()
  for (const leaf of leafHashes) tree.append(leaf, node => nodes.set(`${node.level}:${node.index}`, node.hash))
  return {
    tree,
    async nodes(refs: readonly TreeNodeRef[]) {
      return refs.map(ref => {
        const hash = nodes.get(`${ref.level}:${ref.index}`)
        if (hash === undefined) throw new RangeError(`node ${ref.level}:${ref.index} is not in the tree`)
        return hash
      })
    },
  }
}
