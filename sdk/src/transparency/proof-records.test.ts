// Signed checkpoint statements and the two proof records: what verifies against a pinned key, and the
// step named when something does not.
import t from 'tap'
import { createSigner } from '../protocol/signer.js'
import { bytesToHex } from '../protocol/hex.js'
import { chainProblem, signCheckpointStatement, statementHash, verifyCheckpointStatement, type CheckpointStatement } from './checkpoint-statement.js'
import { createMemoryNodeReader } from './memory-node-reader.js'
import { consistencyProof, inclusionProof } from './merkle-proofs.js'
import { receiptLeafHash } from './merkle-hash.js'
import { createConsistencyProofRecord, createInclusionProofRecord, verifyConsistencyProofRecord, verifyInclusionProofRecord } from './proof-records.js'

const signer = createSigner({ secret: new Uint8Array(32).fill(7) })
const other = createSigner({ secret: new Uint8Array(32).fill(9) })
const logId = 'ab'.repeat(32)
const ids = Array.from({ length: 13 }, (_, i) => i.toString(16).padStart(2, '0').repeat(32))
const reader = createMemoryNodeReader(ids.map(receiptLeafHash))

async function statementAt(size: number, previous?: CheckpointStatement): Promise<CheckpointStatement> {
  const partial = createMemoryNodeReader(ids.slice(0, size).map(receiptLeafHash))
  return signCheckpointStatement({ log_id: logId, tree_size: size, root_hash: bytesToHex(partial.tree.root()), timestamp: 1_700_000_000 + size, chain_root: previous && statementHash(previous) }, signer)
}

t.test('a statement verifies against its pinned key and fails at the named step otherwise', async t => {
  const s = await statementAt(5)
  t.equal(s.chain_root, undefined, 'the first statement of a log carries no chain_root')
  t.match(verifyCheckpointStatement(s, { trustedKeys: [signer.publicKey] }), { ok: true, signerTrusted: true })
  t.match(verifyCheckpointStatement(s, { trustedKeys: [other.publicKey] }), { ok: false, step: 'signer' })
  t.match(verifyCheckpointStatement({ ...s, tree_size: 6 }, { trustedKeys: [signer.publicKey] }), { ok: false, step: 'signature' })
  t.match(verifyCheckpointStatement({ ...s, schema: 'gate.checkpoint_statement.v1' }, { trustedKeys: [signer.publicKey] }), { ok: false, step: 'unknown_schema' })
  t.match(verifyCheckpointStatement({ ...s, extra: 1 }, { trustedKeys: [signer.publicKey] }), { ok: false, step: 'malformed' })
  t.match(verifyCheckpointStatement({ ...s, root_hash: 'AB'.repeat(32) }, { trustedKeys: [signer.publicKey] }), { ok: false, step: 'malformed' })
})

t.test('chain_root links each statement to the one before; a gap, a shrink or another log breaks it', async t => {
  const a = await statementAt(3)
  const b = await statementAt(8, a)
  t.equal(chainProblem(a, b), undefined)
  t.match(chainProblem(b, await statementAt(9, a)), /chain_root/)
  t.match(chainProblem(b, await statementAt(5, b)), /below the previous/)
  t.match(chainProblem(a, { ...b, log_id: 'cd'.repeat(32) }), /log_id/)
})

t.test('an inclusion proof record verifies offline; a wrong receipt, path, index or key fails', async t => {
  const checkpoint = await statementAt(13)
  const record = createInclusionProofRecord(ids[6]!, 6, await inclusionProof(6, 13, reader), checkpoint)
  const trusted = { trustedKeys: [signer.publicKey] }
  t.same(verifyInclusionProofRecord(record, { ...trusted, receiptId: ids[6] }), { ok: true, signerTrusted: true })
  t.match(verifyInclusionProofRecord(record, { ...trusted, receiptId: ids[7] }), { ok: false, step: 'receipt' })
  t.match(verifyInclusionProofRecord({ ...record, receipt_id: ids[7] }, trusted), { ok: false, step: 'proof' })
  t.match(verifyInclusionProofRecord({ ...record, leaf_index: 7 }, trusted), { ok: false, step: 'proof' })
  t.match(verifyInclusionProofRecord({ ...record, leaf_index: 13 }, trusted), { ok: false, step: 'proof' })
  t.match(verifyInclusionProofRecord({ ...record, audit_path: record.audit_path.slice(1) }, trusted), { ok: false, step: 'proof' })
  t.match(verifyInclusionProofRecord({ ...record, tree_size: 12 }, trusted), { ok: false, step: 'malformed' })
  t.match(verifyInclusionProofRecord(record, { trustedKeys: [other.publicKey] }), { ok: false, step: 'signer' })
  t.same(verifyInclusionProofRecord(record, { trustedKeys: [], allowUntrusted: true }), { ok: true, signerTrusted: false })
  t.match(verifyInclusionProofRecord({ ...record, schema: 'gate.transparency.inclusion-proof.v1' }, trusted), { ok: false, step: 'unknown_schema' })
})

t.test('a consistency proof record verifies offline; swapped statements or a forged root fail', async t => {
  const first = await statementAt(5)
  const second = await statementAt(13, first)
  const record = createConsistencyProofRecord(first, second, await consistencyProof(5, 13, reader))
  const trusted = { trustedKeys: [signer.publicKey] }
  t.same(verifyConsistencyProofRecord(record, trusted), { ok: true, signerTrusted: true })
  t.match(verifyConsistencyProofRecord({ ...record, first: second, second: first }, trusted), { ok: false, step: 'proof' })
  const forged = signCheckpointStatement({ log_id: logId, tree_size: 13, root_hash: 'ee'.repeat(32), timestamp: 1 }, signer)
  t.match(verifyConsistencyProofRecord({ ...record, second: forged }, trusted), { ok: false, step: 'proof' })
  t.match(verifyConsistencyProofRecord({ ...record, proof: [] }, trusted), { ok: false, step: 'proof' })
  t.match(verifyConsistencyProofRecord(record, { trustedKeys: [] }), { ok: false, step: 'signer' })
})
