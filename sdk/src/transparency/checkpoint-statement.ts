// Signed checkpoint statements (spec 03: `gate.checkpoint_statement.v2`): the log's size and RFC 6962
// root at a moment, signed by the authority key, each linked to the one before it by `chain_root` (the
// SHA-256 of the previous statement's canonical JSON, signature included), so statements form a hash
// chain as well as a series of tree heads. The signature covers the RFC 8785 canonical JSON of every
// member except `signature`. Verification never throws: it names the failing step. A `.v1` statement is
// metadata-only and refused here (a v1 statement must not carry `chain_root`, and proofs need v2).
import { canonicalJson } from '../protocol/canonical-json.js'
import { utf8 } from '../protocol/hex.js'
import { algorithmOf } from '../protocol/keys.js'
import { sha256Hex } from '../protocol/sha256.js'
import type { Signer } from '../protocol/signer.js'
import { checkSignature } from '../protocol/verify-signature.js'
import { hexToHash } from './merkle-hash.js'

export const CHECKPOINT_STATEMENT_SCHEMA = 'gate.checkpoint_statement.v2'
const CHECKPOINT_STATEMENT_V1 = 'gate.checkpoint_statement.v1'
const MEMBERS = new Set(['schema', 'log_id', 'tree_size', 'root_hash', 'timestamp', 'chain_root', 'signer_key', 'signature'])

/** A signed tree head of the receipt log. */
export interface CheckpointStatement {
  schema: typeof CHECKPOINT_STATEMENT_SCHEMA
  /** 64 hex: the log's random identity, fixed when its tree was created. */
  log_id: string
  /** Leaves (receipts) the tree covers: the first `tree_size` receipts in commit order. */
  tree_size: number
  /** 64 hex: the RFC 6962 root of those leaves. */
  root_hash: string
  /** Unix seconds the statement was signed. */
  timestamp: number
  /** 64 hex: SHA-256 of the previous statement's canonical JSON; absent on a log's first statement. */
  chain_root?: string
  /** Wire-form public key of the signer. */
  signer_key: string
  signature: string
}

export type UnsignedCheckpointStatement = Omit<CheckpointStatement, 'schema' | 'signer_key' | 'signature'>

/** Which check failed. */
export type StatementFailureStep = 'malformed' | 'unknown_schema' | 'signature' | 'signer'

export type StatementVerification =
  | { ok: true; statement: CheckpointStatement; signerTrusted: boolean }
  | { ok: false; step: StatementFailureStep; reason: string; statement?: CheckpointStatement }

/** Signs a statement as `signer`. */
export function signCheckpointStatement(body: UnsignedCheckpointStatement, signer: Signer): CheckpointStatement {
  const unsigned: Omit<CheckpointStatement, 'signature'> = { schema: CHECKPOINT_STATEMENT_SCHEMA, ...body, signer_key: signer.publicKey }
  if (unsigned.chain_root === undefined) delete unsigned.chain_root
  const shape = shapeProblem({ ...unsigned, signature: '' })
  if (shape !== undefined) throw new TypeError(`checkpoint statement: ${shape}`)
  return { ...unsigned, signature: signer.sign(utf8(canonicalJson(unsigned))) }
}

/** The hash the next statement's `chain_root` carries: SHA-256 of this statement's canonical JSON. */
export function statementHash(statement: CheckpointStatement): string {
  return sha256Hex(canonicalJson(statement))
}

/**
 * Verifies shape, schema and signature; `signerTrusted` says whether `signer_key` is one of
 * `trustedKeys`. With `requireTrusted` (default true) an untrusted signer fails at step `signer`.
 */
export function verifyCheckpointStatement(value: unknown, options: { trustedKeys: Iterable<string>; requireTrusted?: boolean }): StatementVerification {
  if (typeof value === 'object' && value !== null && (value as { schema?: unknown }).schema === CHECKPOINT_STATEMENT_V1) {
    return { ok: false, step: 'unknown_schema', reason: `${CHECKPOINT_STATEMENT_V1} statements are metadata-only; proofs need ${CHECKPOINT_STATEMENT_SCHEMA}` }
  }
  const shape = shapeProblem(value)
  if (shape !== undefined) return { ok: false, step: shape.startsWith('schema') ? 'unknown_schema' : 'malformed', reason: shape }
  const statement = value as CheckpointStatement
  const { signature, ...unsigned } = statement
  const check = checkSignature(statement.signer_key, utf8(canonicalJson(unsigned)), signature)
  if (!check.valid) return { ok: false, step: 'signature', reason: check.reason ?? 'signature does not verify', statement }
  const signerTrusted = new Set(options.trustedKeys).has(statement.signer_key)
  if (!signerTrusted && options.requireTrusted !== false) return { ok: false, step: 'signer', reason: `signer ${statement.signer_key} is not a trusted key`, statement }
  return { ok: true, statement, signerTrusted }
}

/** Why `next` cannot follow `previous` in one log's statement chain, or undefined when it can. */
export function chainProblem(previous: CheckpointStatement, next: CheckpointStatement): string | undefined {
  if (next.log_id !== previous.log_id) return `log_id ${next.log_id} differs from the previous statement's ${previous.log_id}`
  if (next.tree_size < previous.tree_size) return `tree_size ${next.tree_size} is below the previous statement's ${previous.tree_size}`
  if (next.chain_root !== statementHash(previous)) return `chain_root ${next.chain_root ?? '(absent)'} does not hash the previous statement (tree_size ${previous.tree_size})`
  return undefined
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object'
  const s = value as Record<string, unknown>
  if (s.schema !== CHECKPOINT_STATEMENT_SCHEMA) return `schema must be "${CHECKPOINT_STATEMENT_SCHEMA}", got ${JSON.stringify(s.schema)}`
  for (const key of Object.keys(s)) if (!MEMBERS.has(key)) return `unknown member "${key}"`
  if (hexToHash(s.log_id) === undefined) return 'log_id must be 64 lowercase hex characters'
  if (!Number.isSafeInteger(s.tree_size) || (s.tree_size as number) < 0) return 'tree_size must be a non-negative integer'
  if (hexToHash(s.root_hash) === undefined) return 'root_hash must be 64 lowercase hex characters'
  if (!Number.isSafeInteger(s.timestamp) || (s.timestamp as number) < 0) return 'timestamp must be a non-negative integer (Unix seconds)'
  if (s.chain_root !== undefined && hexToHash(s.chain_root) === undefined) return 'chain_root must be 64 lowercase hex characters'
  if (typeof s.signer_key !== 'string' || algorithmOf(s.signer_key) === undefined) return 'signer_key must be an Ed25519, P-256, P-384 or hybrid public key'
  if (typeof s.signature !== 'string') return 'signature must be a string'
  return undefined
}
