// The broken sidecar's capability decisions and core receipts (test support, beside broken-sidecar.ts):
// what a token allows for one request, built only on @gate/sdk's protocol functions, with one switch
// per fault a conformance check targets. Without faults it decides as docs/capabilities.md says.
import {
  authorizeCall,
  canonicalJson,
  findGrant,
  planCaptures,
  toCoreReceiptWithKeypair,
  utf8,
  verifyCapability,
  type CapabilityToken,
  type CapturePlan,
  type GrantMatch,
  type GateHttpRequest,
  type HttpReceipt,
  type MonetaryAmount,
  type Signer,
  type ToolCall,
} from '@gate/sdk'
import { validate } from '@gate/schemas'

/** The switches of the faults these functions implement. */
export interface CapabilityFaults {
  /** Verification trusts a child's own signer when its chain's root is trusted (no attenuation proof). */
  ignoreDelegationScope: boolean
  /** Every token its delegatee signed is denied. */
  denyDelegatedChildren: boolean
  /** Token-level fields (schema, caveats, attenuations, aggregate budgets, share) are not read. */
  ignoreTokenFields: boolean
  /** Grants match by server and tool only: constraints, operations, DPoP and cost caps are not read. */
  ignoreGrantFields: boolean
  /** Grant max_invocations are not counted. */
  ignoreMaxInvocations: boolean
  /** Counters are kept per token id only: a delegation link's limits are not shared by its descendants. */
  perTokenBudgets: boolean
}

export interface TokenUse {
  /** Why the token does not let the request through, or undefined. */
  denial: string | undefined
  /** The counters to capture when it does. */
  plan?: CapturePlan
}

/** Decides a token for one request (after parsing, before budgets). */
export function decideToken(token: CapabilityToken, call: ToolCall, trustedIssuers: readonly string[], now: number, faults: CapabilityFaults): TokenUse {
  if (!faults.ignoreTokenFields) {
    const shape = validate('gate.capability.v1', token)
    if (!shape.ok) return { denial: `not a gate.capability.v1 token: ${shape.errors[0]}` }
  }
  const chainRoot = token.delegation_chain?.[0]?.delegator
  const trusted = faults.ignoreDelegationScope && chainRoot !== undefined && trustedIssuers.includes(chainRoot) ? [...trustedIssuers, token.issuer] : trustedIssuers
  const verified = verifyCapability(token, { trustedIssuers: trusted, now })
  if (!verified.ok) return { denial: verified.reason }
  if (faults.denyDelegatedChildren && verified.authority === 'delegated') return { denial: 'this sidecar accepts no delegated child' }
  const match = faults.ignoreTokenFields ? findGrant(token.scope, call) : authorizeCall(token, call)
  if (faults.ignoreGrantFields) {
    const covering = (token.scope.grants ?? []).findIndex(g => (g.server_id === '*' || g.server_id === call.server_id) && findGrant({ grants: [{ server_id: g.server_id, tool_name: g.tool_name }] }, call).ok)
    if (covering < 0) return { denial: `no grant covers ${call.tool_name}` }
    return { denial: undefined, plan: captures(token, { index: covering, grant: token.scope.grants![covering]!, links: [] }, call.cost, faults) }
  }
  if (!match.ok) return { denial: match.reason }
  return { denial: undefined, plan: captures(token, { index: match.index, grant: match.grant, links: (match as Partial<GrantMatch>).links ?? [] }, call.cost, faults) }
}

function captures(token: CapabilityToken, matched: GrantMatch, cost: MonetaryAmount | undefined, faults: CapabilityFaults): CapturePlan {
  const plan = planCaptures(token, matched, cost)
  const invocations = plan.invocations.filter(
    c => !(faults.ignoreMaxInvocations && c.kind === 'grant') && !(faults.ignoreTokenFields && c.kind !== 'grant') && !(faults.perTokenBudgets && c.link !== undefined),
  )
  return { ...plan, invocations }
}

/** In-memory counters: a capture advances every counter of a plan, or none. */
export function createCounters() {
  const used = new Map<string, { used: number; max: number }>()
  return {
    /** Why the plan cannot be captured, or undefined after capturing it. */
    capture(plan: CapturePlan): string | undefined {
      for (const c of plan.invocations) {
        const row = used.get(`${c.owner} ${c.key}`)
        if (c.fixedMax && row !== undefined && row.max !== c.max) return `the ${c.kind} budget was created with ${row.max} invocations, not ${c.max}`
        if ((row?.used ?? 0) >= c.max) return `all ${c.max} invocations of the ${c.kind} budget are used`
      }
      for (const c of plan.invocations) used.set(`${c.owner} ${c.key}`, { used: (used.get(`${c.owner} ${c.key}`)?.used ?? 0) + 1, max: c.max })
      return undefined
    },
  }
}

/** The call an HTTP request is (docs/capabilities.md): its path and query parameters, and arguments.body. */
export function httpCall(request: GateHttpRequest, pattern: string, operationId: string | undefined): ToolCall {
  const params: [string, unknown][] = []
  const names = pattern.split('/')
  const values = String(request.path).split('/')
  names.forEach((segment, i) => {
    const name = /^\{([^{}]+)\}$/.exec(segment)?.[1]
    if (name !== undefined && values[i] !== undefined) params.push([name, decodeURIComponent(values[i]!)])
  })
  const query = Object.entries(request.query ?? {}).filter(([k]) => k !== 'gate_capability')
  const hasBody = (request.body_hash ?? null) !== null || (request.body_length ?? 0) > 0
  const collide = query.some(([k]) => params.some(([p]) => p === k))
  const body = request.arguments?.body
  const visible = !collide && (hasBody ? body !== undefined && Object.keys(request.arguments ?? {}).length === 1 : request.arguments === undefined)
  const call: ToolCall = {
    server_id: 'http',
    tool_name: `${request.method} ${pattern}`,
    arguments: visible ? Object.fromEntries([...params, ...query, ...(hasBody ? [['body', body] as [string, unknown]] : [])]) : undefined,
    session_id: request.session_id ?? null,
  }
  if (operationId !== undefined) call.aliases = [operationId]
  const amount = (request.governed_intent as { max_amount?: { units?: unknown; currency?: unknown } } | undefined)?.max_amount
  if (amount !== undefined && Number.isSafeInteger(amount.units) && typeof amount.currency === 'string') call.cost = { units: amount.units as number, currency: amount.currency }
  return call
}

/** The core form the broken sidecar serves: spec 03's, or (fault) one carrying the HTTP receipt's id. */
export function coreReceiptOf(receipt: HttpReceipt, signer: Signer, copyHttpId: boolean): Record<string, unknown> {
  const core = toCoreReceiptWithKeypair(receipt, signer) as unknown as Record<string, unknown>
  if (!copyHttpId) return core
  const { id: _id, signature: _sig, ...body } = core
  return { id: receipt.id, ...body, signature: signer.sign(utf8(canonicalJson({ id: receipt.id, body }))) }
}
