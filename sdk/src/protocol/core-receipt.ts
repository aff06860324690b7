// Core receipts (spec 03, gate.receipt.v1) and the HTTP → core mapping of spec 02. The HTTP signature
// is never copied: the core body is re-signed with the kernel keypair.
//
// Binding (spec 03, docs/receipts.md): `id` is the content address of the receipt, the SHA-256 of the
// canonical body, `body` being every field but `id`, `signature` and `bbs_signature` (so including
// `bbs_projection_version` when present); the signature covers canonical `{id, body, bbs_signature?}`.
// `content_hash` binds the request or tool-call content; for an HTTP-derived receipt Gate writes the
// SHA-256 of the canonical body without `content_hash` (spec 02 mapping table). A verifier cannot
// recompute it in general (the content is not in the receipt), so it checks its form only.
import { GateError, SigningError } from '../errors.js'
import type { CoreDecision, CoreReceipt, HttpReceipt, Verdict, VerifyReceiptResponse } from '../types.js'
import { CanonicalMembers, canonicalJson } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { utf8 } from './hex.js'
import { sha256Hex } from './sha256.js'
import type { SigningAlgorithm } from './keys.js'
import type { Signer } from './signer.js'
import { checkSignature } from './verify-signature.js'

const BBS_PROJECTION_VERSION = 'gate.bbs-projection.receipt.v1'

/** Always refuses: a copied HTTP signature would not verify over the core body (spec 02). */
export function toCoreReceipt(_receipt?: HttpReceipt): never {
  throw new SigningError('toCoreReceipt needs the kernel keypair; use toCoreReceiptWithKeypair (the HTTP signature is never copied)')
}

/** HTTP verdict → core decision (spec 02 mapping table). */
export function verdictToDecision(verdict: Verdict): CoreDecision {
  switch (verdict.verdict) {
    case 'allow':
      return { verdict: 'allow' }
    case 'deny':
      return { verdict: 'deny', reason: verdict.reason, guard: verdict.guard }
    case 'cancel':
      return { verdict: 'cancelled', reason: verdict.reason }
    case 'incomplete':
      return { verdict: 'incomplete', reason: verdict.reason }
  }
}

/** Core decision → HTTP verdict: a deny comes back with status 403 and empty details. */
export function decisionToVerdict(decision: CoreDecision): Verdict {
  switch (decision.verdict) {
    case 'allow':
      return { verdict: 'allow' }
    case 'deny':
      return { verdict: 'deny', reason: decision.reason, guard: decision.guard, http_status: 403 }
    case 'cancelled':
      return { verdict: 'cancel', reason: decision.reason }
    case 'incomplete':
      return { verdict: 'incomplete', reason: decision.reason }
  }
}

/**
 * Builds the core receipt of an HTTP receipt and signs it with `signer` (spec 02 mapping table). Its
 * `id` is its own content address (spec 03), not the HTTP receipt's: the two bodies differ, and a
 * verifier recomputes the id from the body it holds.
 */
export function toCoreReceiptWithKeypair(receipt: HttpReceipt, signer: Signer): CoreReceipt {
  if (signer.publicKey !== receipt.kernel_key) {
    throw new SigningError('the keypair does not match the receipt kernel_key, so the core receipt would not verify')
  }
  return signCoreReceipt(coreReceiptBody(receipt, signer.algorithm), signer)
}

/**
 * The core body of an HTTP receipt (spec 02 mapping table), `content_hash` included; nothing signed.
 * `coreReceiptId` of it is the id its core form has.
 */
export function coreReceiptBody(receipt: HttpReceipt, algorithm: SigningAlgorithm = 'ed25519'): Record<string, unknown> {
  const body = coreBodyFields(receipt, algorithm)
  body.content_hash = sha256Hex(canonicalJson(body))
  return body
}

/**
 * The canonical JSON of `toCoreReceiptWithKeypair(receipt, signer)`, written in one pass: each member
 * is canonicalized once and the content hash preimage, the id preimage, the signed bytes and the stored
 * text are joined from those member texts (trust-control converts a page of receipts per first read).
 */
export function toCoreReceiptJson(receipt: HttpReceipt, signer: Signer): string {
  if (signer.publicKey !== receipt.kernel_key) {
    throw new SigningError('the keypair does not match the receipt kernel_key, so the core receipt would not verify')
  }
  const body = coreBodyFields(receipt, signer.algorithm)
  const problem = kindCoherenceProblem(body)
  if (problem !== undefined) throw new SigningError(problem)
  const members = new CanonicalMembers(body)
  members.set('content_hash', `"${sha256Hex(members.join())}"`)
  return signMembers(members, signer).json
}

/**
 * Signs a core body given as its canonical member texts (spec 03 order: the content-addressed id, then
 * the signature over canonical `{id, body}`), and returns the id, the signature and the receipt's
 * canonical JSON, all joined from those texts: the body is canonicalized once.
 */
function signMembers(members: CanonicalMembers, signer: Signer): { id: string; signature: string; json: string } {
  const bodyText = members.join()
  const id = sha256Hex(bodyText)
  // canonical {id, body}: "body" sorts before "id"
  const signature = signer.sign(utf8(`{"body":${bodyText},"id":"${id}"}`))
  members.set('id', `"${id}"`)
  members.set('signature', `"${signature}"`)
  return { id, signature, json: members.join() }
}

/** The core body of spec 02's mapping table, without `content_hash`. */
function coreBodyFields(receipt: HttpReceipt, algorithm: SigningAlgorithm): Record<string, unknown> {
  const parameters = { method: receipt.method, route: receipt.route_pattern, request_id: receipt.request_id }
  const body: Record<string, unknown> = {
    timestamp: receipt.timestamp,
    capability_id: receipt.capability_id ?? '',
    tool_server: 'http',
    tool_name: `${receipt.method} ${receipt.route_pattern}`,
    action: { parameters, parameter_hash: sha256Hex(canonicalJson(parameters)) },
    receipt_kind: receipt.receipt_kind,
    boundary_class: receipt.boundary_class,
    tool_origin: receipt.tool_origin,
    redaction_mode: receipt.redaction_mode,
    decision: verdictToDecision(receipt.verdict),
    policy_hash: receipt.policy_hash,
    trust_level: receipt.trust_level,
    tenant_id: null,
    bbs_projection_version: null,
    kernel_key: receipt.kernel_key,
  }
  if (receipt.actor_chain !== undefined && receipt.actor_chain.length > 0) body.actor_chain = receipt.actor_chain
  if (receipt.evidence !== undefined) body.evidence = receipt.evidence
  if (receipt.metadata !== undefined) body.metadata = receipt.metadata
  const hint = algorithmHint(algorithm)
  if (hint !== undefined) body.algorithm = hint
  return body
}

/**
 * The core receipt's optional `algorithm` hint (spec 03: `ed25519`, `p256`, `p384`): written for the
 * ECDSA curves as before; a hybrid key's prefix says what it is, and the hint's enum has no value for it.
 */
function algorithmHint(algorithm: SigningAlgorithm): 'p256' | 'p384' | undefined {
  return algorithm === 'p256' || algorithm === 'p384' ? algorithm : undefined
}

/**
 * Signs a core receipt body (every field but `id` and the signatures) in spec order: authority
 * semantics (kind coherence), the content-addressed id, the signature over canonical `{id, body}`.
 */
export function signCoreReceipt(body: Record<string, unknown>, signer: Signer): CoreReceipt {
  if (body.kernel_key !== signer.publicKey) throw new SigningError('the body names a kernel_key other than the signer, so the receipt would not verify')
  const problem = kindCoherenceProblem(body)
  if (problem !== undefined) throw new SigningError(problem)
  const id = coreReceiptId(body)
  const signature = signer.sign(utf8(canonicalJson({ id, body })))
  return { id, ...body, signature } as unknown as CoreReceipt
}

/** A signed core receipt and its canonical JSON: the bytes stored and served. */
export interface SignedCoreReceipt {
  receipt: CoreReceipt
  json: string
}

/**
 * `signCoreReceipt` for a receipt to store: the body takes the signer's `kernel_key` (and `algorithm`
 * when not Ed25519), and any failure, the signer's own included, is a SigningError
 * (gate_receipt_sign_failed).
 */
export function signCoreReceiptJson(body: Record<string, unknown>, signer: Signer): SignedCoreReceipt {
  const full: Record<string, unknown> = { ...body, kernel_key: signer.publicKey }
  const hint = algorithmHint(signer.algorithm)
  if (hint !== undefined) full.algorithm = hint
  const problem = kindCoherenceProblem(full)
  if (problem !== undefined) throw new SigningError(problem)
  try {
    const { id, signature, json } = signMembers(new CanonicalMembers(full), signer)
    return { receipt: { id, ...full, signature } as unknown as CoreReceipt, json }
  } catch (err) {
    if (err instanceof SigningError) throw err
    throw new SigningError('the signer failed', err)
  }
}

/** The content-addressed id of a core receipt body (every field but id, signature and bbs_signature). */
export function coreReceiptId(body: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(body))
}

/** Why a core body breaks kind coherence (spec 03), or undefined when coherent. */
export function kindCoherenceProblem(body: Record<string, unknown>): string | undefined {
  const kind = body.receipt_kind
  const expect =
    kind === 'mediated_decision'
      ? { boundary: 'prevent', trust: 'mediated', decision: true }
      : kind === 'trace_observation'
        ? { boundary: 'detect_only', trust: 'verified', decision: false }
        : kind === 'advisory_evaluation'
          ? { boundary: 'advisory_only', trust: 'advisory', decision: false }
          : undefined
  if (expect === undefined) return `unknown receipt_kind ${String(kind)}`
  if (body.boundary_class !== expect.boundary) return `${String(kind)} requires boundary_class ${expect.boundary}`
  if (body.trust_level !== expect.trust) return `${String(kind)} requires trust_level ${expect.trust}`
  const hasDecision = body.decision !== undefined && body.decision !== null
  if (expect.decision && !hasDecision) return `${String(kind)} must carry a decision`
  if (!expect.decision && hasDecision) return `${String(kind)} must not carry a decision`
  const outcome = body.observation_outcome
  if (kind === 'mediated_decision' && outcome !== undefined && outcome !== null) return 'mediated_decision must not carry observation_outcome'
  // an observation or evaluation that states no outcome records nothing (the reference vectors: such
  // a receipt "has a valid id but is not signable")
  if (kind !== 'mediated_decision' && (typeof outcome !== 'string' || outcome === '')) return `${String(kind)} must carry observation_outcome`
  const bbs = body.bbs_projection_version
  if (bbs !== undefined && bbs !== null && bbs !== BBS_PROJECTION_VERSION) return `unknown bbs_projection_version ${String(bbs)}`
  return undefined
}

/** The step at which core receipt verification stopped. */
export type CoreReceiptCheckStep = 'shape' | 'semantics' | 'receipt_id' | 'signature' | 'signer' | 'parameter_hash'

/**
 * The fields of spec 02's VerifyReceiptResponse for a core receipt, plus the failing step.
 * `signature_valid` stops at the first failing step (semantics, then id, then signature);
 * `receipt_id_valid` and `parameter_hash_valid` are each computed on their own.
 */
export interface CoreReceiptCheck extends VerifyReceiptResponse {
  failedStep: CoreReceiptCheckStep | null
  detail: string
}

const HEX64 = /^[0-9a-f]{64}$/
const CORE_RESULT: Record<string, string> = { allow: 'allow', deny: 'deny', cancelled: 'cancelled', incomplete: 'incomplete' }

/**
 * Verifies a core receipt in spec order: authority semantics (kind coherence), the recomputed
 * content-addressed id, the signature over canonical `{id, body, bbs_signature?}` with `kernel_key`;
 * then whether the signer is trusted and `content_hash` is well formed. Never throws.
 */
export function verifyCoreReceipt(receipt: unknown, options: { trustedKeys?: Iterable<string>; backend?: CryptoBackendName } = {}): CoreReceiptCheck {
  const out: CoreReceiptCheck = {
    signature_valid: false,
    signer_trusted: false,
    receipt_id_valid: false,
    parameter_hash_valid: false,
    receipt_kind: '',
    boundary_class: '',
    trust_level: '',
    result: '',
    authorized: false,
    signer_key_hex: '',
    ok: false,
    failedStep: 'shape',
    detail: 'not a JSON object',
  }
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return out
  const { id, signature, bbs_signature, ...body } = receipt as Record<string, unknown>
  out.receipt_kind = String(body.receipt_kind ?? '')
  out.boundary_class = String(body.boundary_class ?? '')
  out.trust_level = String(body.trust_level ?? '')
  const verdict = (body.decision as { verdict?: unknown } | null | undefined)?.verdict
  out.result = typeof verdict === 'string' ? (CORE_RESULT[verdict] ?? verdict) : ''
  if (typeof body.kernel_key === 'string') out.signer_key_hex = body.kernel_key
  if (typeof id !== 'string' || typeof signature !== 'string' || typeof body.kernel_key !== 'string') {
    return { ...out, detail: 'id, signature and kernel_key must be strings' }
  }
  const trusted = options.trustedKeys === undefined ? [] : [...options.trustedKeys]
  out.signer_trusted = trusted.includes(body.kernel_key)
  const parameterProblem = parameterHashProblem(body)
  out.parameter_hash_valid = parameterProblem === undefined
  let failure: { step: CoreReceiptCheckStep; detail: string } | undefined
  try {
    out.receipt_id_valid = coreReceiptId(body) === id
    const semantics = kindCoherenceProblem(body)
    if (semantics !== undefined) failure = { step: 'semantics', detail: semantics }
    else if (!out.receipt_id_valid) failure = { step: 'receipt_id', detail: 'id is not the hash of the receipt body' }
    else {
      const signed: Record<string, unknown> = { id, body }
      if (bbs_signature !== undefined) signed.bbs_signature = bbs_signature
      const sig = checkSignature(body.kernel_key, utf8(canonicalJson(signed)), signature, options.backend)
      if (!sig.valid) failure = { step: 'signature', detail: sig.reason ?? 'signature does not verify' }
    }
  } catch (err) {
    if (err instanceof GateError) return { ...out, receipt_id_valid: false, detail: err.message }
    throw err
  }
  out.signature_valid = failure === undefined
  failure ??= !out.signer_trusted
    ? { step: 'signer', detail: 'kernel_key is not a trusted signer' }
    : parameterProblem !== undefined
      ? { step: 'parameter_hash', detail: parameterProblem }
      : undefined
  // spec 02: the roll-up also asks for the mediated semantics (trace and advisory records are evidence only)
  const mediated = body.receipt_kind === 'mediated_decision' && body.boundary_class === 'prevent' && body.trust_level === 'mediated'
  out.ok = failure === undefined && mediated
  out.authorized = out.ok && out.result === 'allow'
  return { ...out, failedStep: failure?.step ?? null, detail: failure?.detail ?? (mediated ? 'ok' : `${out.receipt_kind}: evidence only, not an authorization`) }
}

/**
 * Why a core receipt's hashes are not what they claim, or undefined: `action.parameter_hash` must be the
 * SHA-256 of the canonical `action.parameters` (the reference verifier checks this), and `content_hash`
 * must be 64 lowercase hex (spec 02; its preimage is not in the receipt). Never throws.
 */
function parameterHashProblem(body: Record<string, unknown>): string | undefined {
  const action = body.action as { parameters?: unknown; parameter_hash?: unknown } | null | undefined
  if (typeof action !== 'object' || action === null || action.parameters === undefined || typeof action.parameter_hash !== 'string') {
    return 'action.parameter_hash and action.parameters must both be present'
  }
  let recomputed: string
  try {
    recomputed = sha256Hex(canonicalJson(action.parameters))
  } catch {
    return 'action.parameters cannot be canonicalized'
  }
  if (recomputed !== action.parameter_hash) return 'action.parameter_hash is not the hash of action.parameters'
  if (typeof body.content_hash !== 'string' || !HEX64.test(body.content_hash)) return 'content_hash is not a 64-character lowercase hex digest'
  return undefined
}
