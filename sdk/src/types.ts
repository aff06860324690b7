// Wire types of the sidecar protocol (spec 02) and the signed records of spec 03. Wire JSON stays
// snake_case as in the spec; every type here has a schema in schemas/v1.

export type HttpMethod = 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export const HTTP_METHODS: readonly HttpMethod[] = Object.freeze([
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
])

/** Safe methods need no capability (spec 02, HttpMethod). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

export type AuthMethod =
  | { method: 'bearer'; token_hash: string }
  | { method: 'api_key'; key_name: string; key_hash: string }
  | { method: 'cookie'; cookie_name: string; cookie_hash: string }
  | { method: 'mtls_certificate'; subject_dn: string; fingerprint: string }
  | { method: 'anonymous' }

export interface CallerIdentity {
  subject: string
  auth_method: AuthMethod
  verified?: boolean
  tenant?: string | null
  agent_id?: string | null
}

export interface GateHttpRequest {
  request_id: string
  method: HttpMethod
  route_pattern: string
  path: string
  query?: Record<string, string>
  headers?: Record<string, string>
  caller: CallerIdentity
  body_hash?: string | null
  body_length?: number
  session_id?: string | null
  capability_id?: string | null
  timestamp: number
  tool_server?: string
  tool_name?: string
  arguments?: Record<string, unknown>
  model_metadata?: Record<string, unknown>
  governed_intent?: Record<string, unknown>
  approval_token?: Record<string, unknown>
  approval_tokens?: Record<string, unknown>[]
  threshold_approval_proposal?: Record<string, unknown>
  supplemental_authorization?: Record<string, unknown>
  execution_nonce?: SignedExecutionNonce
}

export interface DenyDetails {
  tool_name?: string | null
  tool_server?: string | null
  requested_action?: string | null
  required_scope?: string | null
  granted_scope?: string | null
  reason_code?: string | null
  receipt_id?: string | null
  hint?: string | null
  docs_url?: string | null
}

export type Verdict =
  | { verdict: 'allow' }
  | { verdict: 'deny'; reason: string; guard: string; http_status?: number; details?: DenyDetails }
  | { verdict: 'cancel'; reason: string }
  | { verdict: 'incomplete'; reason: string }

export interface GuardEvidence {
  guard_name: string
  verdict: boolean
  details?: string | null
}

export interface ActorRef {
  [key: string]: unknown
}

export type ReceiptKind = 'mediated_decision' | 'trace_observation' | 'advisory_evaluation'
export type BoundaryClass = 'prevent' | 'detect_only' | 'advisory_only'
export type TrustLevel = 'mediated' | 'verified' | 'advisory'
export type ToolOrigin = 'caller_executed' | 'host_executed_provider_reported' | 'host_executed_unmediated'
export type RedactionMode = 'none' | 'summary' | 'redacted'

export interface HttpReceipt {
  id: string
  request_id: string
  route_pattern: string
  method: HttpMethod
  caller_identity_hash: string
  session_id?: string | null
  verdict: Verdict
  receipt_kind: ReceiptKind
  boundary_class: BoundaryClass
  observation_outcome?: never
  tool_origin: ToolOrigin
  redaction_mode: RedactionMode
  actor_chain?: ActorRef[]
  evidence?: GuardEvidence[]
  response_status: number
  timestamp: number
  content_hash: string
  policy_hash: string
  trust_level: TrustLevel
  capability_id?: string | null
  metadata?: Record<string, unknown> | null
  kernel_key: string
  signature: string
}

/** An HttpReceipt before signing: `id` and `signature` are assigned by `signHttpReceipt`. */
export type HttpReceiptBody = Omit<HttpReceipt, 'id' | 'signature' | 'kernel_key'> & { id?: string; signature?: string; kernel_key?: string }

/**
 * A signed execution nonce (spec 02 leaves the fields "not shown"; Gate's design, see
 * docs/execution-nonce.md): bound to caller, route, content hash and request id, single use, expiring.
 */
export interface SignedExecutionNonce {
  schema: 'gate.execution_nonce.v1'
  nonce_id: string
  request_id: string
  caller_identity_hash: string
  method: HttpMethod
  route_pattern: string
  content_hash: string
  issued_at: number
  expires_at: number
  kernel_key: string
  signature: string
}

export interface EvaluateResponse {
  verdict: Verdict
  receipt: HttpReceipt
  evidence: GuardEvidence[]
  execution_nonce?: SignedExecutionNonce
}

export interface VerifyReceiptResponse {
  signature_valid: boolean
  signer_trusted: boolean
  receipt_id_valid: boolean
  parameter_hash_valid: boolean
  receipt_kind: string
  boundary_class: string
  trust_level: string
  result: 'allow' | 'deny' | 'cancelled' | 'incomplete' | string
  authorized: boolean
  signer_key_hex: string
  ok: boolean
}

export interface HealthResponse {
  status: 'healthy' | 'degraded' | 'unhealthy'
  version: string
  receipt_backend: '' | 'durable' | 'ephemeral'
  revocation_backend: '' | 'durable' | 'remote' | 'ephemeral'
  /** Additive (Gate): the signer's public key, so SDKs can verify receipts locally. */
  kernel_key?: string
  /** Additive (Gate): what this service supports (spec 03 `gate.capabilities.v1` envelope); peers use the intersection. */
  capabilities?: { schema: 'gate.capabilities.v1'; features: Record<string, boolean> }
}

/** Structured error body (spec 02, Errors). */
export interface GateErrorBody {
  error: string
  message: string
  receipt_id?: string | null
  suggestion?: string | null
  [extra: string]: unknown
}

// ---- capability tokens (spec 03, gate.capability.v1) ----

export interface ToolGrant {
  server_id: string
  tool_name: string
  operations?: string[]
  constraints?: Record<string, unknown>[]
  max_invocations?: number | null
  max_cost_per_invocation?: MonetaryAmount | null
  max_total_cost?: MonetaryAmount | null
  dpop_required?: boolean
}

export interface MonetaryAmount {
  units: number
  currency: string
}

export interface CapabilityScope {
  /** Tool grants; absent in a scope that grants only resources or prompts. */
  grants?: ToolGrant[]
  resource_grants?: Record<string, unknown>[]
  prompt_grants?: Record<string, unknown>[]
}

export interface AggregateInvocationBudget {
  scope: 'capability' | 'delegation_family'
  max_invocations: number
  root_binding?: string
}

/**
 * One delegation step, signed by its delegator over every other member. `scope_hash` binds the scope
 * delegated; `scope`, `expires_at`, `budget_share_bps` and `aggregate_invocation_budget` are Gate's
 * additive members stating the delegated terms themselves, so a verifier can prove a child's
 * attenuation instead of trusting it (docs/capabilities.md).
 */
export interface DelegationLink {
  capability_id: string
  delegator: string
  delegatee: string
  scope_hash?: string
  timestamp: number
  scope?: CapabilityScope
  expires_at?: number
  budget_share_bps?: number
  aggregate_invocation_budget?: AggregateInvocationBudget
  signature: string
}

export type SignatureAlgorithm = 'ed25519' | 'p256' | 'p384' | 'hybrid'

export interface Caveat {
  kind: string
  predicate: unknown
  sig?: string
}

export interface AttenuationProof {
  parentScopeHash: string
  childScopeHash: string
  normalizedSubsetProof: unknown
}

export interface CapabilityToken {
  schema?: 'gate.capability.v1'
  id: string
  issuer: string
  subject: string
  scope: CapabilityScope
  issued_at: number
  expires_at: number
  delegation_chain?: DelegationLink[]
  aggregate_invocation_budget?: AggregateInvocationBudget
  algorithm?: SignatureAlgorithm
  caveats?: Caveat[]
  scope_attenuations?: unknown[]
  attenuation_proof?: AttenuationProof
  budget_share_bps?: number
  signature: string
}

// ---- core receipts (spec 03, gate.receipt.v1) ----

export type CoreDecision =
  | { verdict: 'allow' }
  | { verdict: 'deny'; reason: string; guard: string }
  | { verdict: 'cancelled'; reason: string }
  | { verdict: 'incomplete'; reason: string }

export interface CoreReceiptBody {
  id: string
  timestamp: number
  capability_id: string
  tool_server: string
  tool_name: string
  action: { parameters: Record<string, unknown>; parameter_hash: string }
  receipt_kind: ReceiptKind
  boundary_class: BoundaryClass
  observation_outcome?: string
  tool_origin: ToolOrigin
  redaction_mode: RedactionMode
  actor_chain?: ActorRef[]
  decision?: CoreDecision
  content_hash: string
  policy_hash: string
  evidence?: GuardEvidence[]
  metadata?: Record<string, unknown> | null
  trust_level: TrustLevel
  tenant_id: string | null
  bbs_projection_version: string | null
  /** Receipt DAG (spec 03; docs/receipts.md, Receipt lineage): present on the receipts of an agent session. */
  chainId?: string
  parentReceiptIds?: string[]
  parentSetHash?: string
  dagOrdinal?: number
  hlc?: HybridLogicalClock
  kernel_key: string
  algorithm?: 'ed25519' | 'p256' | 'p384'
}

/** The hybrid logical clock of a receipt (spec 03, Receipt DAG; the member `hlc` is Gate's name). */
export interface HybridLogicalClock {
  /** Unix seconds. */
  wallSeconds: number
  /** Orders receipts within one second of one kernel. */
  logical: number
  /** The signing kernel (first 16 hex of the SHA-256 of its kernel_key). */
  kernelId: string
}

/** An agent session as the edges see it (spec 02, SessionContext); guards read it. */
export interface SessionContext {
  session_id: string
  caller: CallerIdentity
  /** Unix seconds. */
  created_at: number
  /** Unix seconds, or null (a session with no end of its own: stdio, a wire connection). */
  expires_at: number | null
  /** Tool calls the session asked for, this one included. */
  request_count: number
  /** Bytes Gate read from the agent on this session (requests), and wrote to it (answers). */
  bytes_read: number
  bytes_written: number
  /** 0 for a direct caller; the delegation chain's length of the capability the session presents. */
  delegation_depth: number
  metadata: Record<string, unknown> | null
}

export interface CoreReceipt extends CoreReceiptBody {
  signature: string
  bbs_signature?: string
}
