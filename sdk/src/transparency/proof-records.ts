// The two proof records a third party verifies offline with nothing but a pinned key:
//   gate.transparency.inclusion-proof.v2     a receipt id is leaf `leaf_index` of the tree a signed
//                                            checkpoint statement commits to (RFC 9162 2.1.3.2)
//   gate.checkpoint_consistency_proof.v2     the tree of one signed statement is a prefix of another's
//                                            (RFC 9162 2.1.4.2)
// Both embed the signed statements they prove against; a statement verifies only against a key the
// verifier pins (never its embedded `signer_key` alone). docs/transparency.md states the algorithm.
import { verifyCheckpointStatement, type CheckpointStatement, type StatementFailureStep } from './checkpoint-statement.js'
import { hashToHex, hexToHash, receiptLeafHash } from './merkle-hash.js'
import { verifyConsistency, verifyInclusion } from './merkle-verify.js'

export const INCLUSION_PROOF_SCHEMA = 'gate.transparency.inclusion-proof.v2'
export const CONSISTENCY_PROOF_SCHEMA = 'gate.checkpoint_consistency_proof.v2'

/** A receipt's inclusion in a checkpointed tree. */
export interface InclusionProofRecord {
  schema: typeof INCLUSION_PROOF_SCHEMA
  receipt_id: string
  /** Zero-based position of the receipt in commit order. */
  leaf_index: number
  /** Equals `checkpoint.tree_size`. */
  tree_size: number
  /** Sibling hashes, leaf to root (64 hex each). */
  audit_path: string[]
  checkpoint: CheckpointStatement
}

/** The tree of `first` is a prefix of the tree of `second`. */
export interface ConsistencyProofRecord {
  schema: typeof CONSISTENCY_PROOF_SCHEMA
  first: CheckpointStatement
  second: CheckpointStatement
  /** RFC 9162 consistency path (64 hex each); empty when both sizes are equal. */
  proof: string[]
}

export type ProofFailureStep = 'malformed' | 'unknown_schema' | 'receipt' | 'proof' | StatementFailureStep

export type ProofVerification = { ok: true; signerTrusted: boolean } | { ok: false; step: ProofFailureStep; reason: string }

export interface VerifyProofOptions {
  trustedKeys: Iterable<string>
  /** Accept a statement signed by an untrusted key (reported as `signerTrusted: false`); default false. */
  allowUntrusted?: boolean
}

/** Builds an inclusion proof record. */
export function createInclusionProofRecord(receiptId: string, leafIndex: number, auditPath: readonly Uint8Array[], checkpoint: CheckpointStatement): InclusionProofRecord {
  return { schema: INCLUSION_PROOF_SCHEMA, receipt_id: receiptId, leaf_index: leafIndex, tree_size: checkpoint.tree_size, audit_path: auditPath.map(hashToHex), checkpoint }
}

/** Builds a consistency proof record. */
export function createConsistencyProofRecord(first: CheckpointStatement, second: CheckpointStatement, proof: readonly Uint8Array[]): ConsistencyProofRecord {
  return { schema: CONSISTENCY_PROOF_SCHEMA, first, second, proof: proof.map(hashToHex) }
}

/** Verifies an inclusion proof record; with `receiptId`, also that it is that receipt's proof. */
export function verifyInclusionProofRecord(value: unknown, options: VerifyProofOptions & { receiptId?: string }): ProofVerification {
  if (!isObject(value)) return fail('malformed', 'not a JSON object')
  if (value.schema !== INCLUSION_PROOF_SCHEMA) return fail('unknown_schema', `schema must be "${INCLUSION_PROOF_SCHEMA}", got ${JSON.stringify(value.schema)}`)
  const extra = Object.keys(value).find(k => !['schema', 'receipt_id', 'leaf_index', 'tree_size', 'audit_path', 'checkpoint'].includes(k))
  if (extra !== undefined) return fail('malformed', `unknown member "${extra}"`)
  if (hexToHash(value.receipt_id) === undefined) return fail('malformed', 'receipt_id must be 64 lowercase hex characters')
  if (options.receiptId !== undefined && value.receipt_id !== options.receiptId) return fail('receipt', `the proof is for receipt ${String(value.receipt_id)}, not ${options.receiptId}`)
  const path = hashes(value.audit_path)
  if (path === undefined) return fail('malformed', 'audit_path must be an array of 64-hex hashes')
  const statement = verifyCheckpointStatement(value.checkpoint, { trustedKeys: options.trustedKeys, requireTrusted: options.allowUntrusted !== true })
  if (!statement.ok) return fail(statement.step, `checkpoint: ${statement.reason}`)
  const { tree_size: size, root_hash } = statement.statement
  if (value.tree_size !== size) return fail('malformed', `tree_size ${String(value.tree_size)} differs from the checkpoint's ${size}`)
  const index = value.leaf_index
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0 || index >= size) return fail('proof', `leaf_index ${String(index)} is not inside a tree of ${size} leaves`)
  if (!verifyInclusion(receiptLeafHash(value.receipt_id as string), index, size, path, hexToHash(root_hash)!)) {
    return fail('proof', `the audit path does not lead from leaf ${index} to the checkpoint root`)
  }
  return { ok: true, signerTrusted: statement.signerTrusted }
}

/** Verifies a consistency proof record: both statements, same log, and the prefix proof. */
export function verifyConsistencyProofRecord(value: unknown, options: VerifyProofOptions): ProofVerification {
  if (!isObject(value)) return fail('malformed', 'not a JSON object')
  if (value.schema !== CONSISTENCY_PROOF_SCHEMA) return fail('unknown_schema', `schema must be "${CONSISTENCY_PROOF_SCHEMA}", got ${JSON.stringify(value.schema)}`)
  const extra = Object.keys(value).find(k => !['schema', 'first', 'second', 'proof'].includes(k))
  if (extra !== undefined) return fail('malformed', `unknown member "${extra}"`)
  const proof = hashes(value.proof)
  if (proof === undefined) return fail('malformed', 'proof must be an array of 64-hex hashes')
  const verified: CheckpointStatement[] = []
  let trusted = true
  for (const which of ['first', 'second'] as const) {
    const r = verifyCheckpointStatement(value[which], { trustedKeys: options.trustedKeys, requireTrusted: options.allowUntrusted !== true })
    if (!r.ok) return fail(r.step, `${which}: ${r.reason}`)
    trusted &&= r.signerTrusted
    verified.push(r.statement)
  }
  const [first, second] = verified as [CheckpointStatement, CheckpointStatement]
  if (first.log_id !== second.log_id) return fail('proof', `the statements belong to different logs (${first.log_id}, ${second.log_id})`)
  if (first.tree_size > second.tree_size) return fail('proof', `first tree_size ${first.tree_size} exceeds second ${second.tree_size}`)
  if (!verifyConsistency(first.tree_size, second.tree_size, proof, hexToHash(first.root_hash)!, hexToHash(second.root_hash)!)) {
    return fail('proof', `the tree of ${first.tree_size} leaves is not shown to be a prefix of the tree of ${second.tree_size}`)
  }
  return { ok: true, signerTrusted: trusted }
}

function hashes(value: unknown): Uint8Array[] | undefined {
  if (!Array.isArray(value)) return undefined
  const out: Uint8Array[] = []
  for (const item of value) {
    const h = hexToHash(item)
    if (h === undefined) return undefined
    out.push(h)
  }
  return out
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function fail(step: ProofFailureStep, reason: string): ProofVerification {
  return { ok: false, step, reason }
}
