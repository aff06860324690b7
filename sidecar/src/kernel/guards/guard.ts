// The guard interface: each guard looks at the evaluation context and either passes (optionally adding
// evidence) or decides the verdict. Guards run in a fixed order (kernel/guard-pipeline.ts,
// docs/kernel.md). They read what is decided through `subject`, the same for an HTTP request and an
// agent's tool call, so both paths decide with one set of guards.
import type { CapabilityToken, GrantMatch, GuardEvidence, MonetaryAmount, SessionContext, SignedExecutionNonce, ToolCall, Verdict } from '@gate/sdk'

/** What is being decided, in the terms every guard reads (decision-subject.ts builds it). */
export interface DecisionSubject {
  /** How denials name it: `POST /pets/{id}`, or `tool fs:write_file`. */
  label: string
  /** DenyDetails.required_scope: the canonical grant string a token must hold. */
  requiredScope: string
  /** The default policy (spec 01): SessionAllow needs no token, DenyByDefault a grant. */
  policy: 'SessionAllow' | 'DenyByDefault'
  /** DefaultPolicyGuard's evidence for a session-scoped allow. */
  sessionAllowReason: string
  /** x-gate-approval-required, x-gate-sensitivity: restricted, or a tool the operator gated. */
  approvalRequired: boolean
  /** x-gate-budget-limit: a cap on the declared cost, minor units. */
  budgetLimit: bigint | undefined
  /** What approvals and nonces are bound to, with the caller identity and content hashes. */
  bindings: { method: string; routePattern: string }
  /** Whether the strict execution-nonce preflight applies (with --strict-nonces): HTTP requests only. */
  strictNonce: boolean
  /** The call a capability token is checked against (authorizeCall). */
  toolCall(): ToolCall
  /** A `capability_id` the request named: it must be the presented token's. */
  requestedCapabilityId: string | null | undefined
  /** An authorization extension the authority does not enforce (spec 02): denied at the boundary, never ignored. */
  unenforcedAuthorization: string | undefined
  /** Why the call cannot be made as asked (an unknown tool, arguments its input_schema rejects). */
  inputProblem: { code: string; reason: string } | undefined
  /** How to present a token, for the deny's hint. */
  capabilityHint: string
}

export interface GuardContext {
  subject: DecisionSubject
  callerIdentityHash: string
  contentHash: string
  now: number
  /** The capability token presented (header, query parameter or an issued id), parsed, unverified. */
  presentedToken: CapabilityToken | undefined
  /** Why a presented token could not even be read (bad encoding, unknown id). */
  presentedTokenProblem: string | undefined
  /** Presented capability id, unverified (the revocation check reads it; receipts record only authentic ids). */
  capabilityId: string | null
  /** The cost the request declares (governed_intent.max_amount), or why it cannot be read. */
  declaredCost: MonetaryAmount | undefined
  declaredCostProblem: string | undefined
  /** Set by the capability guard when a token was verified and a grant matched (with each link's). */
  verifiedToken?: CapabilityToken
  grant?: GrantMatch
  /** Set by the budget guard: the cost charged, and the grant's cost budget when it has one. */
  charge?: { grantIndex?: number; budgetTotal?: number; budgetRemaining?: number }
  /** Set by the budget guard when it refused the declared cost. */
  costRefused?: boolean
  approvalId: string | undefined
  /** Raw `x-gate-execution-nonce` header or the request's `execution_nonce`. */
  nonceId: string | undefined
  presentedNonce: SignedExecutionNonce | undefined
  /** Bound request id of a consumed nonce: the receipt reuses it. */
  boundRequestId?: string
  /** The agent session the call belongs to (spec 02 SessionContext), as its edge filled it; absent for HTTP requests. */
  session?: SessionContext
}

export type GuardOutcome =
  | { pass: true; evidence?: GuardEvidence }
  | {
      pass: false
      verdict: Verdict
      evidence: GuardEvidence
      /** A pending approval created by this decision. */
      approvalId?: string
      /** An execution nonce issued by a strict preflight. */
      issueNonce?: boolean
    }

export interface Guard {
  readonly name: string
  check(ctx: GuardContext): GuardOutcome | Promise<GuardOutcome>
}

/** A deny from `guard` with `reason`, status and details. */
export function deny(
  guard: string,
  reason: string,
  options: { status?: number; details?: Record<string, string | null | undefined> } = {},
): GuardOutcome {
  const details = options.details === undefined ? undefined : compact(options.details)
  const verdict: Verdict = { verdict: 'deny', reason, guard, http_status: options.status ?? 403 }
  if (details !== undefined) verdict.details = details
  return { pass: false, verdict, evidence: { guard_name: guard, verdict: false, details: reason } }
}

function compact(d: Record<string, string | null | undefined>): Record<string, string> | undefined {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(d)) if (typeof v === 'string' && v !== '') out[k] = v
  return Object.keys(out).length === 0 ? undefined : out
}
