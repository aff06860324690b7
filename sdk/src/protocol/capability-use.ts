// Using a verified token for one call (docs/capabilities.md, "Using a token"). The call is neutral, a
// server id, a tool name and the arguments, so the HTTP kernel and the MCP tool-call path decide alike.
// Every token field that constrains a call is either enforced here (or by the budget captures this
// module plans) or refuses the call: a restriction Gate cannot check is never read as satisfied.
import type { AggregateInvocationBudget, CapabilityScope, CapabilityToken, MonetaryAmount, ToolGrant } from '../types.js'
import { checkConstraint, type ConstraintFailureCode } from './constraints.js'
import { toolPatternMatches } from './tool-pattern.js'

/** One call a token is presented for. */
export interface ToolCall {
  server_id: string
  /** HTTP: "{METHOD} {route_pattern}". */
  tool_name: string
  /** Other names of the same tool (an HTTP route's operationId). */
  aliases?: readonly string[]
  /** The call's arguments; undefined when Gate cannot see all of them (docs/capabilities.md). */
  arguments: Record<string, unknown> | undefined
  /** The cost the caller declared for this call, if any. */
  cost?: MonetaryAmount
  session_id?: string | null
}

export type CallDenialCode =
  | 'scope_mismatch'
  | 'operation_not_granted'
  | 'dpop_unsupported'
  | ConstraintFailureCode
  | 'cost_undeclared'
  | 'cost_currency_mismatch'
  | 'cost_exceeds_grant'
  | 'caveat_unsupported'
  | 'caveat_malformed'
  | 'caveat_unsatisfied'
  | 'scope_attenuations_unsupported'
  | 'budget_share_unsupported'

export type CallAuthorization = { ok: true; index: number; grant: ToolGrant } | { ok: false; code: CallDenialCode; reason: string }

/** The operation a call performs (spec 03 Operation); a grant listing operations must list it. */
export const INVOKE_OPERATION = 'invoke'

/** Whether `token` (already verified) lets `call` through, and through which grant. */
export function authorizeCall(token: CapabilityToken, call: ToolCall): CallAuthorization {
  const refused = tokenUseProblem(token, call)
  if (refused !== undefined) return refused
  return findGrant(token.scope, call)
}

/** Token-level fields that constrain every call: caveats, scope attenuations, the budget share. */
export function tokenUseProblem(token: CapabilityToken, call: ToolCall): Extract<CallAuthorization, { ok: false }> | undefined {
  for (const [i, caveat] of (token.caveats ?? []).entries()) {
    const problem = caveatProblem(caveat, call)
    if (problem !== undefined) return { ok: false, code: problem.code, reason: `caveats[${i}]: ${problem.reason}` }
  }
  if (Array.isArray(token.scope_attenuations) && token.scope_attenuations.length > 0) {
    // The subset the token holds is proven from the scopes themselves; a list of attenuation steps
    // whose wire form spec 03 does not show could restrict further in ways Gate cannot apply.
    return { ok: false, code: 'scope_attenuations_unsupported', reason: 'scope_attenuations are not applied by this verifier, so a token carrying them is refused' }
  }
  if (token.budget_share_bps !== undefined && token.aggregate_invocation_budget === undefined) {
    return { ok: false, code: 'budget_share_unsupported', reason: 'budget_share_bps is a share of an aggregate_invocation_budget, and the token carries none' }
  }
  return undefined
}

/**
 * The first grant of `scope` that covers the call in every dimension; else why none does (the most
 * specific reason among the grants naming the call's tool).
 */
export function findGrant(scope: CapabilityScope, call: ToolCall): CallAuthorization {
  let miss: Extract<CallAuthorization, { ok: false }> | undefined
  const grants = scope.grants ?? []
  for (let index = 0; index < grants.length; index++) {
    const grant = grants[index] as ToolGrant
    if (grant.server_id !== '*' && grant.server_id !== call.server_id) continue
    if (!toolPatternMatches(grant.tool_name, call.tool_name, call.aliases)) continue
    const problem = grantProblem(grant, call)
    if (problem === undefined) return { ok: true, index, grant }
    miss ??= problem
  }
  return miss ?? { ok: false, code: 'scope_mismatch', reason: `no grant covers ${call.server_id}:${call.tool_name}` }
}

function grantProblem(grant: ToolGrant, call: ToolCall): Extract<CallAuthorization, { ok: false }> | undefined {
  const deny = (code: CallDenialCode, reason: string) => ({ ok: false as const, code, reason: `grant ${grant.server_id}:${grant.tool_name}: ${reason}` })
  if (grant.operations !== undefined && !grant.operations.includes(INVOKE_OPERATION)) return deny('operation_not_granted', `its operations (${grant.operations.join(', ')}) do not include invoke`)
  if (grant.dpop_required === true) return deny('dpop_unsupported', 'it requires a DPoP proof of possession, which this call does not carry')
  for (const constraint of grant.constraints ?? []) {
    const outcome = checkConstraint(constraint, call.arguments)
    if (!outcome.ok) return deny(outcome.code, outcome.reason)
  }
  for (const cap of [grant.max_cost_per_invocation, grant.max_total_cost]) {
    if (cap === undefined || cap === null) continue
    if (call.cost === undefined) return deny('cost_undeclared', 'it caps cost, and the call declares none (governed_intent.max_amount)')
    if (call.cost.currency !== cap.currency) return deny('cost_currency_mismatch', `it caps cost in ${cap.currency}, the call declares ${call.cost.currency}`)
  }
  const perCall = grant.max_cost_per_invocation
  if (perCall !== undefined && perCall !== null && call.cost !== undefined && call.cost.units > perCall.units) {
    return deny('cost_exceeds_grant', `the declared cost ${call.cost.units} exceeds max_cost_per_invocation ${perCall.units} ${perCall.currency}`)
  }
  return undefined
}

// Caveats (spec 03: typed {kind, predicate, sig?}). Gate enforces two kinds whose predicate is one
// string with an evident meaning; any other kind, and any signed caveat (whose signer and signing input
// the spec does not show), refuses the call.
function caveatProblem(caveat: unknown, call: ToolCall): { code: CallDenialCode; reason: string } | undefined {
  const c = caveat as { kind?: unknown; predicate?: unknown; sig?: unknown } | null
  if (typeof c !== 'object' || c === null || typeof c.kind !== 'string') return { code: 'caveat_malformed', reason: 'a caveat needs a kind string' }
  if (c.sig !== undefined) return { code: 'caveat_unsupported', reason: `caveat ${c.kind} is signed, and this verifier cannot check caveat signatures` }
  if (c.kind !== 'bind_session' && c.kind !== 'restrict_tool') return { code: 'caveat_unsupported', reason: `caveat kind ${c.kind} is not enforced by this verifier` }
  if (typeof c.predicate !== 'string' || c.predicate === '') return { code: 'caveat_malformed', reason: `caveat ${c.kind} needs a non-empty string predicate` }
  if (c.kind === 'bind_session') {
    return call.session_id === c.predicate ? undefined : { code: 'caveat_unsatisfied', reason: `bind_session: the call is not in session ${c.predicate}` }
  }
  return toolPatternMatches(c.predicate, call.tool_name, call.aliases) ? undefined : { code: 'caveat_unsatisfied', reason: `restrict_tool: ${call.tool_name} is not ${c.predicate}` }
}

/** One invocation counter a call must be able to advance. */
export interface InvocationCapture {
  /** What the counter belongs to: a capability id, or `family:<binding>` for a delegation family. */
  owner: string
  key: string
  max: number
  /** Refuse a capture presenting another maximum than the one the counter was created with. */
  fixedMax: boolean
  /** What exhausting it means, for the deny. */
  kind: 'grant' | 'aggregate' | 'family' | 'share'
}

/** A cost the call adds to a grant's running total, capped. */
export interface CostCapture {
  owner: string
  key: string
  units: number
  currency: string
  maxUnits: number
}

/** Every counter one call advances; all of them, or none, are captured (spec 03: atomically). */
export interface CapturePlan {
  invocations: InvocationCapture[]
  cost?: CostCapture
}

/** The budget key of a grant (its index and tool name). */
export function grantBudgetKey(index: number, grant: ToolGrant): string {
  return `${index}:${grant.tool_name}`
}

/**
 * The counters a call through `grant` advances: the grant's max_invocations, the token's aggregate
 * budget (its own counter, or its delegation family's, shared with the root), the token's share of
 * that budget, and the grant's max_total_cost.
 */
export function planCaptures(token: CapabilityToken, index: number, grant: ToolGrant, cost: MonetaryAmount | undefined): CapturePlan {
  const key = grantBudgetKey(index, grant)
  const invocations: InvocationCapture[] = []
  if (typeof grant.max_invocations === 'number') invocations.push({ owner: token.id, key, max: grant.max_invocations, fixedMax: false, kind: 'grant' })
  const aggregate = token.aggregate_invocation_budget
  if (aggregate !== undefined) {
    if (aggregate.scope === 'delegation_family') {
      invocations.push({ owner: `family:${familyBinding(token, aggregate)}`, key: 'family', max: aggregate.max_invocations, fixedMax: true, kind: 'family' })
    } else {
      invocations.push({ owner: token.id, key: 'aggregate', max: aggregate.max_invocations, fixedMax: false, kind: 'aggregate' })
    }
    if (token.budget_share_bps !== undefined) {
      invocations.push({ owner: token.id, key: 'share', max: Math.floor((aggregate.max_invocations * token.budget_share_bps) / 10_000), fixedMax: false, kind: 'share' })
    }
  }
  const total = grant.max_total_cost
  const plan: CapturePlan = { invocations }
  if (total !== undefined && total !== null && cost !== undefined) plan.cost = { owner: token.id, key, units: cost.units, currency: cost.currency, maxUnits: total.units }
  return plan
}

/** A delegation family's counter: its root binding, else the id of the root capability. */
export function familyBinding(token: CapabilityToken, aggregate: AggregateInvocationBudget): string {
  return aggregate.root_binding ?? token.delegation_chain?.[0]?.capability_id ?? token.id
}
