// Attenuation: is what a child holds a subset of what it was delegated? One function over every
// dimension a capability grants: tool grants (server, tool pattern, operations, constraints, invocation
// and cost limits, DPoP), resource grants, prompt grants, the budget share, the aggregate invocation
// budget and the expiry. As in Biscuit and UCAN, a child may only add restrictions: each child grant
// must be covered by one delegated grant that is no wider in any dimension, and a dimension the
// verifier cannot compare (a member it does not know) makes the answer "not a subset" (fail closed).
import type { AggregateInvocationBudget, CapabilityScope, MonetaryAmount, ToolGrant } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import { toolPatternCovers } from './tool-pattern.js'

/** What a delegation hands over (a link's terms), or what a token holds. */
export interface DelegationTerms {
  scope: CapabilityScope
  expires_at: number
  budget_share_bps?: number
  aggregate_invocation_budget?: AggregateInvocationBudget
}

const FULL_SHARE_BPS = 10_000
const TOOL_GRANT_MEMBERS = new Set(['server_id', 'tool_name', 'operations', 'constraints', 'max_invocations', 'max_cost_per_invocation', 'max_total_cost', 'dpop_required'])
const SCOPE_MEMBERS = new Set(['grants', 'resource_grants', 'prompt_grants'])

/** Why `child` is not within `parent` (naming the dimension), or undefined when it is. */
export function attenuationProblem(child: DelegationTerms, parent: DelegationTerms): string | undefined {
  if (!Number.isSafeInteger(child.expires_at) || !Number.isSafeInteger(parent.expires_at)) return 'expires_at cannot be compared'
  if (child.expires_at > parent.expires_at) return `expires_at ${child.expires_at} outlives the delegated ${parent.expires_at}`
  const childShare = child.budget_share_bps ?? FULL_SHARE_BPS
  const parentShare = parent.budget_share_bps ?? FULL_SHARE_BPS
  if (!Number.isSafeInteger(childShare) || !Number.isSafeInteger(parentShare)) return 'budget_share_bps cannot be compared'
  if (childShare > parentShare) return `budget_share_bps ${childShare} exceeds the delegated ${parentShare}`
  const budget = aggregateBudgetProblem(child.aggregate_invocation_budget, parent.aggregate_invocation_budget)
  if (budget !== undefined) return budget
  return scopeSubsetProblem(child.scope, parent.scope)
}

/** Why scope `child` is not within scope `parent`, or undefined when it is. */
export function scopeSubsetProblem(child: CapabilityScope, parent: CapabilityScope): string | undefined {
  for (const scope of [child, parent]) {
    if (typeof scope !== 'object' || scope === null) return 'a scope is not an object'
    const unknown = Object.keys(scope).find(k => !SCOPE_MEMBERS.has(k))
    if (unknown !== undefined) return `scope member ${unknown} cannot be compared`
  }
  for (const kind of SCOPE_MEMBERS) {
    const list = (child as Record<string, unknown>)[kind]
    if (list !== undefined && !Array.isArray(list)) return `scope.${kind} is not an array`
  }
  const parentGrants = listOf(parent.grants)
  for (const [i, grant] of listOf(child.grants).entries()) {
    const problem = coveringProblem(parentGrants, p => toolGrantSubsetProblem(grant as ToolGrant, p as ToolGrant))
    if (problem !== undefined) return `grants[${i}] (${describeGrant(grant)}): ${problem}`
  }
  for (const kind of ['resource_grants', 'prompt_grants'] as const) {
    const delegated = listOf(parent[kind])
    for (const [i, grant] of listOf(child[kind]).entries()) {
      const problem = coveringProblem(delegated, p => namedGrantSubsetProblem(kind, grant, p))
      if (problem !== undefined) return `${kind}[${i}]: ${problem}`
    }
  }
  return undefined
}

/** Why tool grant `child` is wider than tool grant `parent` in some dimension, or undefined. */
export function toolGrantSubsetProblem(child: ToolGrant, parent: ToolGrant): string | undefined {
  for (const g of [child, parent]) {
    if (typeof g !== 'object' || g === null) return 'a grant is not an object'
    const unknown = Object.keys(g).find(k => !TOOL_GRANT_MEMBERS.has(k))
    if (unknown !== undefined) return `grant member ${unknown} cannot be compared`
  }
  if (parent.server_id !== '*' && parent.server_id !== child.server_id) return `server ${child.server_id} is not ${parent.server_id}`
  if (typeof parent.tool_name !== 'string' || typeof child.tool_name !== 'string' || !toolPatternCovers(parent.tool_name, child.tool_name)) {
    return `tool ${String(child.tool_name)} is not within ${String(parent.tool_name)}`
  }
  const ops = operationsProblem(child.operations, parent.operations)
  if (ops !== undefined) return ops
  const childConstraints = new Set((child.constraints ?? []).map(canonicalOrUndefined))
  for (const c of parent.constraints ?? []) {
    const text = canonicalOrUndefined(c)
    if (text === undefined || !childConstraints.has(text)) return `the delegated constraint ${text ?? '(unreadable)'} is dropped`
  }
  if (isNumber(parent.max_invocations)) {
    if (!isNumber(child.max_invocations)) return `max_invocations is unlimited, the delegated grant allows ${parent.max_invocations}`
    if (child.max_invocations > parent.max_invocations) return `max_invocations ${child.max_invocations} exceeds the delegated ${parent.max_invocations}`
  } else if (parent.max_invocations !== undefined && parent.max_invocations !== null) {
    return 'max_invocations cannot be compared'
  }
  for (const field of ['max_cost_per_invocation', 'max_total_cost'] as const) {
    const problem = costProblem(field, child[field], parent[field])
    if (problem !== undefined) return problem
  }
  if (parent.dpop_required === true && child.dpop_required !== true) return 'dpop_required is dropped'
  return undefined
}

function aggregateBudgetProblem(child: AggregateInvocationBudget | undefined, parent: AggregateInvocationBudget | undefined): string | undefined {
  if (parent === undefined) return undefined
  if (child === undefined) return 'aggregate_invocation_budget is dropped'
  if (!isNumber(parent.max_invocations) || !isNumber(child.max_invocations)) return 'aggregate_invocation_budget cannot be compared'
  // spec 03: a family descendant carries the identical root binding and maximum
  if (parent.scope === 'delegation_family') {
    if (child.scope !== 'delegation_family' || child.max_invocations !== parent.max_invocations || child.root_binding !== parent.root_binding) {
      return 'a delegation_family budget must be carried unchanged (scope, root_binding and max_invocations)'
    }
    return undefined
  }
  if (parent.scope !== 'capability') return 'aggregate_invocation_budget cannot be compared'
  if (child.max_invocations > parent.max_invocations) return `aggregate max_invocations ${child.max_invocations} exceeds the delegated ${parent.max_invocations}`
  return undefined
}

function operationsProblem(child: unknown, parent: unknown): string | undefined {
  // absent: every operation
  if (parent === undefined) return undefined
  if (!Array.isArray(parent)) return 'operations cannot be compared'
  if (!Array.isArray(child)) return `operations are unrestricted, the delegated grant allows ${parent.join(', ')}`
  const extra = child.find(op => !parent.includes(op))
  return extra === undefined ? undefined : `operation ${String(extra)} is not delegated`
}

function costProblem(field: string, child: MonetaryAmount | null | undefined, parent: MonetaryAmount | null | undefined): string | undefined {
  if (parent === undefined || parent === null) return undefined
  if (!isAmount(parent)) return `${field} cannot be compared`
  if (child === undefined || child === null) return `${field} is dropped`
  if (!isAmount(child)) return `${field} cannot be compared`
  if (child.currency !== parent.currency) return `${field} is in ${child.currency}, the delegated cap in ${parent.currency}`
  if (child.units > parent.units) return `${field} ${child.units} exceeds the delegated ${parent.units}`
  return undefined
}

// Resource and prompt grants: spec 03 does not show their fields. The shape {uri_pattern | prompt_name,
// operations} is compared by pattern (exact, "*", or a trailing-"*" prefix) and operations; any other
// shape only by equality with a delegated entry.
function namedGrantSubsetProblem(kind: 'resource_grants' | 'prompt_grants', child: unknown, parent: unknown): string | undefined {
  const nameKey = kind === 'resource_grants' ? 'uri_pattern' : 'prompt_name'
  const c = namedGrant(child, nameKey)
  const p = namedGrant(parent, nameKey)
  if (c === undefined || p === undefined) {
    const a = canonicalOrUndefined(child)
    return a !== undefined && a === canonicalOrUndefined(parent) ? undefined : 'not equal to a delegated entry'
  }
  if (!patternCovers(p.name, c.name)) return `${nameKey} ${c.name} is not within ${p.name}`
  return operationsProblem(c.operations, p.operations)
}

function namedGrant(g: unknown, nameKey: string): { name: string; operations: unknown } | undefined {
  if (typeof g !== 'object' || g === null || Array.isArray(g)) return undefined
  const record = g as Record<string, unknown>
  if (Object.keys(record).some(k => k !== nameKey && k !== 'operations')) return undefined
  const name = record[nameKey]
  if (typeof name !== 'string') return undefined
  if (record.operations !== undefined && !(Array.isArray(record.operations) && record.operations.every(o => typeof o === 'string'))) return undefined
  return { name, operations: record.operations }
}

function patternCovers(parent: string, child: string): boolean {
  if (parent === '*' || parent === child) return true
  if (!parent.endsWith('*')) return false
  const prefix = parent.slice(0, -1)
  return (child.endsWith('*') ? child.slice(0, -1) : child).startsWith(prefix)
}

/** Undefined when some candidate passes `check`; else the first candidate's problem. */
function coveringProblem(candidates: readonly unknown[], check: (candidate: unknown) => string | undefined): string | undefined {
  let first: string | undefined
  for (const candidate of candidates) {
    const problem = check(candidate)
    if (problem === undefined) return undefined
    first ??= problem
  }
  return first ?? 'nothing of its kind was delegated'
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

function describeGrant(g: unknown): string {
  const grant = g as Partial<ToolGrant> | null
  return `${String(grant?.server_id)}:${String(grant?.tool_name)}`
}

function canonicalOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalJson(value)
  } catch {
    return undefined
  }
}

function isNumber(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0
}

function isAmount(v: unknown): v is MonetaryAmount {
  const a = v as Partial<MonetaryAmount> | null
  return typeof a === 'object' && a !== null && isNumber(a.units) && typeof a.currency === 'string'
}
