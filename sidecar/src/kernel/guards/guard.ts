// The guard interface: each guard looks at the evaluation context and either passes (optionally adding
// evidence) or decides the verdict. Guards run in a fixed order (kernel/evaluate.ts, docs/kernel.md).
import type { CapabilityToken, GateHttpRequest, GuardEvidence, MonetaryAmount, SignedExecutionNonce, ToolGrant, Verdict } from '@gate/sdk'
import type { RouteMatch } from '../../openapi/index.js'

export interface GuardContext {
  request: GateHttpRequest
  route: RouteMatch
  /** Route pattern recorded in the receipt: the matched pattern, or the raw path. */
  routePattern: string
  operationId: string | undefined
  callerIdentityHash: string
  contentHash: string
  now: number
  /** The capability token presented (header, query parameter or an issued id), parsed, unverified. */
  presentedToken: CapabilityToken | undefined
  /** Why a presented token could not even be read (bad encoding, unknown id). */
  presentedTokenProblem: string | undefined
  /** Presented capability id, unverified (the revocation check reads it; receipts record only authentic ids). */
  capabilityId: string | null
  /** The query without `gate_capability` (what the content hash and the call's arguments see). */
  query: Record<string, string> | undefined
  /** The cost the request declares (governed_intent.max_amount), or why it cannot be read. */
  declaredCost: MonetaryAmount | undefined
  declaredCostProblem: string | undefined
  /** Set by the capability guard when a token was verified and a grant matched. */
  verifiedToken?: CapabilityToken
  grant?: { index: number; grant: ToolGrant }
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
