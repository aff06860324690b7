// Using a verified token for one call (docs/capabilities.md, "Using a token"). The call is neutral, a
// server id, a tool name and the arguments, so the HTTP kernel and the MCP tool-call path decide alike.
// Every token field that constrains a call is either enforced here (or by the budget captures this
// module plans) or refuses the call: a restriction Gate cannot check is never read as satisfied.
import type { AggregateInvocationBudget, CapabilityScope, CapabilityToken, DelegationLink, MonetaryAmount, ToolGrant } from '../types.js'
import { checkConstraint, type ConstraintFailureCode } from './constraints.js'
import { delegationLinkId } from './delegation.js'
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

/** The grant of delegation link `link` (its index in the chain) that covers a call. */
export interface LinkGrant {
  link: number
  index: number
  grant: ToolGrant
}

/** The token's grant a call uses, and the grant of each link above it that states a scope. */
export interface GrantMatch {
  index: number
  grant: ToolGrant
  links: LinkGrant[]
}

export type CallAuthorization = ({ ok: true } & GrantMatch) | { ok: false; code: CallDenialCode; reason: string }

/** The operation a call performs (spec 03 Operation); a grant listing operations must list it. */
export const INVOKE_OPERATION = 'invoke'

/** Whether `token` (already verified) lets `call` through, and through which grant. */
export function authorizeCall(token: CapabilityToken, call: ToolCall): CallAuthorization {
  const refused = tokenUseProblem(token, call)
  if (refused !== undefined) return refused
  const own = findGrant(token.scope, call)
  if (!own.ok) return own
  const links = findLinkGrants(token, call)
  return 'links' in links ? { ...own, links: links.links } : links
}

/**
 * For each link of the chain that states the scope it delegates, the grant covering the call: the
 * first that does, as for a token. Its limits bound the call with all the link's other descendants
 * (planCaptures). A link stating a scope that does not cover the call refuses it; for a child its
 * delegatee signed, attenuation already proved that every link covers what the child holds.
 */
export function findLinkGrants(token: CapabilityToken, call: ToolCall): { links: LinkGrant[] } | Extract<CallAuthorization, { ok: false }> {
  const links: LinkGrant[] = []
  for (const [i, link] of (token.delegation_chain ?? []).entries()) {
    const budgets = linkBudgetProblem(link)
    if (budgets !== undefined) return { ok: false, code: budgets.code, reason: `delegation_chain[${i}] ${budgets.reason}` }
    if (link.scope === undefined) continue
    const covering = isReadableScope(link.scope) ? findGrant(link.scope, call) : undefined
    if (covering === undefined) return { ok: false, code: 'scope_mismatch', reason: `delegation_chain[${i}] states a scope this verifier cannot read` }
    if (!covering.ok) return { ok: false, code: covering.code, reason: `delegation_chain[${i}] does not delegate this call: ${covering.reason}` }
    links.push({ link: i, index: covering.index, grant: covering.grant })
  }
  return { links }
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
export function findGrant(scope: CapabilityScope, call: ToolCall): { ok: true; index: number; grant: ToolGrant } | Extract<CallAuthorization, { ok: false }> {
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

// As for a token (tokenUseProblem): a share is a share of an aggregate budget the link states.
function linkBudgetProblem(link: DelegationLink): { code: CallDenialCode; reason: string } | undefined {
  const aggregate = link.aggregate_invocation_budget as Partial<AggregateInvocationBudget> | undefined
  const share = link.budget_share_bps
  if (aggregate !== undefined && (typeof aggregate !== 'object' || aggregate === null || (aggregate.scope !== 'capability' && aggregate.scope !== 'delegation_family') || !isCount(aggregate.max_invocations))) {
    return { code: 'scope_mismatch', reason: 'states an aggregate_invocation_budget this verifier cannot read' }
  }
  if (share === undefined) return undefined
  if (!isCount(share) || share > 10_000) return { code: 'scope_mismatch', reason: 'states a budget_share_bps this verifier cannot read' }
  if (aggregate === undefined) return { code: 'budget_share_unsupported', reason: 'carries budget_share_bps, a share of an aggregate_invocation_budget, and states none' }
  return undefined
}

// A link's scope is read only as far as the schema (gate.capability.v1) constrains it; a token that
// skipped that validation must not make the budget arithmetic read garbage.
function isReadableScope(scope: unknown): scope is CapabilityScope {
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) return false
  const grants = (scope as CapabilityScope).grants
  if (grants === undefined) return true
  if (!Array.isArray(grants)) return false
  return grants.every(g => {
    if (typeof g !== 'object' || g === null || Array.isArray(g) || typeof g.server_id !== 'string' || typeof g.tool_name !== 'string') return false
    const total = g.max_total_cost
    return (g.max_invocations === undefined || g.max_invocations === null || isCount(g.max_invocations)) && (total === undefined || total === null || (isCount(total.units) && typeof total.currency === 'string'))
  })
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
  /** What the counter belongs to: a capability id, `family:<binding>`, or `link:<delegation link id>`. */
  owner: string
  key: string
  max: number
  /** Refuse a capture presenting another maximum than the one the counter was created with. */
  fixedMax: boolean
  /** What exhausting it means, for the deny. */
  kind: 'grant' | 'aggregate' | 'family' | 'share'
  /** The delegation link (its index in the chain) whose limit this is; absent for the token's own. */
  link?: number
}

/** A cost the call adds to a grant's running total, capped. */
export interface CostCapture {
  owner: string
  key: string
  units: number
  currency: string
  maxUnits: number
  /** As for InvocationCapture. */
  link?: number
}

/** Every counter one call advances; all of them, or none, are captured (spec 03: atomically). */
export interface CapturePlan {
  invocations: InvocationCapture[]
  costs: CostCapture[]
}

/**
 * What capturing a plan did: every counter's and cost total's new value in the plan's order, or the
 * first one that refused it (an exhausted counter, a counter created with another fixed maximum, a
 * cost cap), in which case nothing was captured.
 */
export type CaptureResult =
  | { allowed: true; used: number[]; costUnits: number[] }
  | { allowed: false; failed: { kind: 'invocation'; index: number; used: number } | { kind: 'max_mismatch'; index: number; recordedMax: number } | { kind: 'cost'; index: number; units: number } }

/** The budget key of a grant (its index and tool name). */
export function grantBudgetKey(index: number, grant: ToolGrant): string {
  return `${index}:${grant.tool_name}`
}

/**
 * The counters a call through `matched` advances. The token's own: the grant's max_invocations, the
 * token's aggregate budget (its own counter, or its delegation family's, shared with the root), its
 * share of that budget, and the grant's max_total_cost. Then, for each link of its chain, the same
 * limits the link delegates, counted under the link's id: every descendant of a link (each sibling,
 * whatever id its signer gave it, and their children) spends from one counter, so a link's limits
 * bound the sum over all of them (issue 37). Token counters use keys `{index}:{tool}`, `aggregate`,
 * `share` and `family`; link counters `link:…`, so no token id can name a link's counter.
 */
export function planCaptures(token: CapabilityToken, matched: GrantMatch, cost: MonetaryAmount | undefined): CapturePlan {
  const { index, grant } = matched
  const key = grantBudgetKey(index, grant)
  const invocations: InvocationCapture[] = []
  const costs: CostCapture[] = []
  if (typeof grant.max_invocations === 'number') invocations.push({ owner: token.id, key, max: grant.max_invocations, fixedMax: false, kind: 'grant' })
  const aggregate = token.aggregate_invocation_budget
  if (aggregate !== undefined) {
    if (aggregate.scope === 'delegation_family') {
      invocations.push({ owner: `family:${familyBinding(token, aggregate)}`, key: 'family', max: aggregate.max_invocations, fixedMax: true, kind: 'family' })
    } else {
      invocations.push({ owner: token.id, key: 'aggregate', max: aggregate.max_invocations, fixedMax: false, kind: 'aggregate' })
    }
    if (token.budget_share_bps !== undefined) invocations.push({ owner: token.id, key: 'share', max: shareOf(aggregate, token.budget_share_bps), fixedMax: false, kind: 'share' })
  }
  const total = grant.max_total_cost
  if (total !== undefined && total !== null && cost !== undefined) costs.push({ owner: token.id, key, units: cost.units, currency: cost.currency, maxUnits: total.units })
  const seen = new Set<string>()
  for (const [i, link] of (token.delegation_chain ?? []).entries()) {
    const owner = `link:${delegationLinkId(link)}`
    // the same signed link twice (a delegator delegating to itself) is one budget, captured once
    if (seen.has(owner)) continue
    seen.add(owner)
    planLinkCaptures(link, i, owner, matched.links.find(l => l.link === i), cost, invocations, costs)
  }
  return { invocations, costs }
}

function planLinkCaptures(link: DelegationLink, i: number, owner: string, covering: LinkGrant | undefined, cost: MonetaryAmount | undefined, invocations: InvocationCapture[], costs: CostCapture[]): void {
  if (covering !== undefined) {
    const key = `link:${grantBudgetKey(covering.index, covering.grant)}`
    const max = covering.grant.max_invocations
    if (typeof max === 'number') invocations.push({ owner, key, max, fixedMax: false, kind: 'grant', link: i })
    const total = covering.grant.max_total_cost
    if (total !== undefined && total !== null && cost !== undefined) costs.push({ owner, key, units: cost.units, currency: cost.currency, maxUnits: total.units, link: i })
  }
  const aggregate = link.aggregate_invocation_budget
  if (aggregate === undefined) return
  // A delegation_family budget is one counter for the whole family, which every descendant carries
  // unchanged (spec 03): the token's own family capture is that counter.
  if (aggregate.scope === 'capability') invocations.push({ owner, key: 'link:aggregate', max: aggregate.max_invocations, fixedMax: false, kind: 'aggregate', link: i })
  if (link.budget_share_bps !== undefined) invocations.push({ owner, key: 'link:share', max: shareOf(aggregate, link.budget_share_bps), fixedMax: false, kind: 'share', link: i })
}

function shareOf(aggregate: AggregateInvocationBudget, bps: number): number {
  return Math.floor((aggregate.max_invocations * bps) / 10_000)
}

function isCount(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 0
}

/** A delegation family's counter: its root binding, else the id of the root capability. */
export function familyBinding(token: CapabilityToken, aggregate: AggregateInvocationBudget): string {
  return aggregate.root_binding ?? token.delegation_chain?.[0]?.capability_id ?? token.id
}
