// Core receipts (spec 03, gate.receipt.v1) and the HTTP → core mapping of spec 02. The HTTP signature
// is never copied: the core body is re-signed with the kernel keypair.
//
// Binding, as Gate implements it (docs/receipts.md): `content_hash` = SHA-256 of the canonical core
// body without `id`, `content_hash` and the signatures (the content preimage); the signature covers
// canonical `{id, body, bbs_signature?}` where `body` is every field but `id`, `signature` and
// `bbs_signature`. Per the mapping table the `id` of an HTTP-derived core receipt is the HTTP
// receipt's own content-addressed id.
import { GateError, SigningError } from '../errors.js'
import type { CoreDecision, CoreReceipt, HttpReceipt, Verdict } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import type { CryptoBackendName } from './crypto-backend.js'
import { utf8 } from './hex.js'
import { sha256Hex } from './sha256.js'
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

/** Builds the core receipt of an HTTP receipt and signs it with `signer` (spec 02 mapping table). */
export function toCoreReceiptWithKeypair(receipt: HttpReceipt, signer: Signer): CoreReceipt {
  if (signer.publicKey !== receipt.kernel_key) {
    throw new SigningError('the keypair does not match the receipt kernel_key, so the core receipt would not verify')
  }
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
  if (signer.algorithm !== 'ed25519') body.algorithm = signer.algorithm
  const problem = kindCoherenceProblem(body)
  if (problem !== undefined) throw new SigningError(problem)
  body.content_hash = sha256Hex(canonicalJson(body))
  const signature = signer.sign(utf8(canonicalJson({ id: receipt.id, body })))
  return { id: receipt.id, ...body, signature } as unknown as CoreReceipt
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
  if (kind === 'mediated_decision' && body.observation_outcome !== undefined && body.observation_outcome !== null) {
    return 'mediated_decision must not carry observation_outcome'
  }
  const bbs = body.bbs_projection_version
  if (bbs !== undefined && bbs !== null && bbs !== BBS_PROJECTION_VERSION) return `unknown bbs_projection_version ${String(bbs)}`
  return undefined
}

export interface CoreReceiptCheck {
  ok: boolean
  kind_coherent: boolean
  content_hash_valid: boolean
  signature_valid: boolean
  signer_trusted: boolean
  /** True only for mediated_decision + prevent + allow with everything valid: an authorization. */
  authorized: boolean
  failedStep: 'shape' | 'kind' | 'content_hash' | 'signature' | 'signer' | null
  detail: string
}

/** Verifies a core receipt: kind coherence, content hash, signature over `{id, body, bbs_signature?}`. */
export function verifyCoreReceipt(
  receipt: unknown,
  options: { trustedKeys?: Iterable<string>; backend?: CryptoBackendName } = {},
): CoreReceiptCheck {
  const out: CoreReceiptCheck = {
    ok: false,
    kind_coherent: false,
    content_hash_valid: false,
    signature_valid: false,
    signer_trusted: false,
    authorized: false,
    failedStep: 'shape',
    detail: 'not a JSON object',
  }
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return out
  const { id, signature, bbs_signature, ...body } = receipt as Record<string, unknown>
  if (typeof id !== 'string' || typeof signature !== 'string' || typeof body.kernel_key !== 'string') {
    out.detail = 'id, signature and kernel_key must be strings'
    return out
  }
  const trusted = options.trustedKeys === undefined ? [] : [...options.trustedKeys]
  out.signer_trusted = trusted.includes(body.kernel_key)
  try {
    const problem = kindCoherenceProblem(body)
    if (problem !== undefined) return { ...out, failedStep: 'kind', detail: problem }
    out.kind_coherent = true
    const { content_hash, ...preimage } = body
    out.content_hash_valid = content_hash === sha256Hex(canonicalJson(preimage))
    if (!out.content_hash_valid) return { ...out, failedStep: 'content_hash', detail: 'content_hash does not match the body' }
    const signed: Record<string, unknown> = { id, body }
    if (bbs_signature !== undefined) signed.bbs_signature = bbs_signature
    const sig = checkSignature(body.kernel_key, utf8(canonicalJson(signed)), signature, options.backend)
    if (!sig.valid) return { ...out, failedStep: 'signature', detail: sig.reason ?? 'signature does not verify' }
    out.signature_valid = true
    if (!out.signer_trusted) return { ...out, failedStep: 'signer', detail: 'kernel_key is not a trusted signer' }
  } catch (err) {
    if (err instanceof GateError) return { ...out, failedStep: 'shape', detail: err.message }
    throw err
  }
  const decision = body.decision as { verdict?: unknown } | undefined
  return {
    ...out,
    ok: true,
    failedStep: null,
    detail: 'ok',
    authorized: body.receipt_kind === 'mediated_decision' && body.boundary_class === 'prevent' && decision?.verdict === 'allow',
  }
}
