// Property tests over random tree sizes: every inclusion and consistency proof the generator makes
// verifies, against roots computed independently (a naive recursive MTH), and any flipped bit fails.
import fc from 'fast-check'
import t from 'tap'
import { createMemoryNodeReader } from './memory-node-reader.js'
import { consistencyProof, inclusionProof, largestPowerOfTwoBelow } from './merkle-proofs.js'
import { emptyTreeRoot, hashChildren, hashLeaf } from './merkle-hash.js'
import { verifyConsistency, verifyInclusion } from './merkle-verify.js'

// RFC 6962 MTH straight from its definition, for comparison with the incremental tree.
function naiveRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return emptyTreeRoot()
  if (leaves.length === 1) return leaves[0]!
  const k = largestPowerOfTwoBelow(leaves.length)
  return hashChildren(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)))
}

const leavesOf = (n: number) => Array.from({ length: n }, (_, i) => hashLeaf(Uint8Array.of(i & 0xff, (i >> 8) & 0xff, 7)))
const flip = (hashes: Uint8Array[], which: number, bit: number) => hashes.map((h, i) => (i === which ? h.map((b, j) => (j === bit >> 3 ? b ^ (1 << (bit & 7)) : b)) : h))
const SIZES = fc.integer({ min: 1, max: 300 })

t.test('the incremental root equals the recursive MTH at every size', async t => {
  const leaves = leavesOf(300)
  const reader = createMemoryNodeReader([])
  for (let n = 0; n <= 300; n++) {
    t.same(reader.tree.root(), naiveRoot(leaves.slice(0, n)), `size ${n}`)
    if (n < 300) reader.tree.append(leaves[n]!)
  }
})

t.test('every inclusion proof verifies; a flipped bit, or another index fails', async () => {
  await fc.assert(
    fc.asyncProperty(SIZES.chain(n => fc.tuple(fc.constant(n), fc.nat(n - 1), fc.nat(255))), async ([n, index, bit]) => {
      const leaves = leavesOf(n)
      const reader = createMemoryNodeReader(leaves)
      const root = naiveRoot(leaves)
      const proof = await inclusionProof(index, n, reader)
      if (!verifyInclusion(leaves[index]!, index, n, proof, root)) return false
      if (proof.length > 0 && verifyInclusion(leaves[index]!, index, n, flip(proof, bit % proof.length, bit), root)) return false
      if (verifyInclusion(flip([leaves[index]!], 0, bit)[0]!, index, n, proof, root)) return false
      if (verifyInclusion(leaves[index]!, index, n, proof, flip([root], 0, bit)[0]!)) return false
      // (the tree size is bound by the signed statement, not the path: sizes with the same path shape verify alike)
      return n === 1 || !verifyInclusion(leaves[index]!, (index + 1) % n, n, proof, root)
    }),
    { numRuns: 300 },
  )
})

t.test('every consistency proof verifies; a flipped bit in the proof or either root fails', async () => {
  await fc.assert(
    fc.asyncProperty(SIZES.chain(n => fc.tuple(fc.integer({ min: 1, max: n }), fc.constant(n), fc.nat(255))), async ([m, n, bit]) => {
      const leaves = leavesOf(n)
      const reader = createMemoryNodeReader(leaves)
      const first = naiveRoot(leaves.slice(0, m))
      const second = naiveRoot(leaves)
      const proof = await consistencyProof(m, n, reader)
      if (!verifyConsistency(m, n, proof, first, second)) return false
      if (proof.length > 0 && verifyConsistency(m, n, flip(proof, bit % proof.length, bit), first, second)) return false
      if (verifyConsistency(m, n, proof, flip([first], 0, bit)[0]!, second)) return false
      if (verifyConsistency(m, n, proof, first, flip([second], 0, bit)[0]!)) return false
      // a different first size with the same proof fails (unless the sizes coincide)
      return m === n || !verifyConsistency(m === 1 ? 2 : m - 1, n, proof, first, second) || naiveRoot(leaves.slice(0, m === 1 ? 2 : m - 1)).every((b, i) => b === first[i])
    }),
    { numRuns: 300 },
  )
})

t.test('proof arguments out of range are refused with gate_bad_request', async t => {
  const reader = createMemoryNodeReader(leavesOf(4))
  await t.rejects(inclusionProof(4, 4, reader), { code: 'gate_bad_request' })
  await t.rejects(inclusionProof(0, 0, reader), { code: 'gate_bad_request' })
  await t.rejects(consistencyProof(5, 4, reader), { code: 'gate_bad_request' })
  t.same(await consistencyProof(4, 4, reader), [])
  t.notOk(verifyConsistency(0, 4, [], emptyTreeRoot(), reader.tree.root()), 'an empty first tree proves nothing')
})
