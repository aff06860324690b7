// The HTTP grant convention (docs/capabilities.md): an HTTP request is the call of tool
// "{METHOD} {route_pattern}" (alias: the route's operationId) on server "http", and its arguments are
// what the tool's input schema names (spec 01, ToolDefinition): the path parameters, the query
// parameters, and `body` when the client supplied the parsed body as `arguments.body`. Grant matching
// and constraints are decided by @gate/sdk's `authorizeCall` on this neutral call.
import type { GateHttpRequest, MonetaryAmount, ToolCall, ToolGrant } from '@gate/sdk'
import type { RouteMatch } from '@gate/openapi'
import type { DecisionSubject } from './guards/guard.js'

/** Presenting a token to an HTTP route (spec 01, Authentication), for the deny's hint. */
export const CAPABILITY_SUGGESTION =
  'present a valid capability token in the X-Gate-Capability header or the gate_capability query parameter'

/** The deny's hint when the request matches no operation and unmatched requests are denied (--deny-unmatched). */
export const UNMATCHED_SUGGESTION =
  'this request matches no operation of the OpenAPI document, and requests outside it are denied (--deny-unmatched): add the operation to the document, or present a capability granting this method and path'

/** What the guards decide about an HTTP request: its matched route (or the method rule) as a call. */
export function httpSubject(input: {
  request: GateHttpRequest
  route: RouteMatch
  routePattern: string
  query: Record<string, string> | undefined
  cost: MonetaryAmount | undefined
}): DecisionSubject {
  const { request, route, routePattern } = input
  const operationId = route.matched ? route.route.operationId : undefined
  const why = route.why === 'side_effects' ? 'x-gate-side-effects: false' : route.matched ? `safe method ${request.method}` : `unmatched route, safe method ${request.method}`
  return {
    label: `${request.method} ${routePattern}`,
    requiredScope: requiredScope({ method: request.method, routePattern }),
    policy: route.decision,
    sessionAllowReason: why,
    // spec 01: x-gate-sensitivity restricted always requires approval, whatever the policy decision
    approvalRequired: route.matched && (route.route.approvalRequired || route.route.sensitivity === 'restricted'),
    budgetLimit: route.matched ? route.route.budgetLimit : undefined,
    bindings: { method: request.method, routePattern },
    strictNonce: true,
    toolCall: () => httpToolCall({ ...input, operationId }),
    requestedCapabilityId: request.capability_id,
    unenforcedAuthorization: request.supplemental_authorization === undefined ? undefined : 'supplemental_authorization',
    inputProblem: undefined,
    capabilityHint: route.why === 'unmatched' ? UNMATCHED_SUGGESTION : CAPABILITY_SUGGESTION,
  }
}

export interface GrantTarget {
  method: string
  routePattern: string
  operationId?: string
}

/** The canonical scope string a request needs (DenyDetails.required_scope). */
export function requiredScope(target: GrantTarget): string {
  return `http:${target.method} ${target.routePattern}`
}

/** The scope a grant carries, in the same notation. */
export function grantScope(grant: ToolGrant): string {
  return `${grant.server_id}:${grant.tool_name}`
}

/** The tool call an HTTP request is. */
export function httpToolCall(input: {
  request: GateHttpRequest
  route: RouteMatch
  routePattern: string
  operationId: string | undefined
  query: Record<string, string> | undefined
  cost: MonetaryAmount | undefined
}): ToolCall {
  const { request } = input
  const call: ToolCall = {
    server_id: 'http',
    tool_name: `${request.method} ${input.routePattern}`,
    arguments: httpArguments(request, input.route.matched ? input.route.params : {}, input.query),
    session_id: request.session_id ?? null,
  }
  if (input.operationId !== undefined) call.aliases = [input.operationId]
  if (input.cost !== undefined) call.cost = input.cost
  return call
}

/**
 * The request's arguments, or undefined when Gate cannot see all of them: a body it was not given
 * (only `arguments.body` carries one), an `arguments` member other than `body`, or a name that is both
 * a path and a query parameter (which one the upstream reads is unknown). Constraints are then not
 * decided, and a grant carrying one does not cover the request.
 */
export function httpArguments(
  request: Pick<GateHttpRequest, 'arguments' | 'body_hash' | 'body_length'>,
  params: Record<string, string>,
  query: Record<string, string> | undefined,
): Record<string, unknown> | undefined {
  const entries: [string, unknown][] = Object.entries(params)
  const names = new Set(entries.map(([k]) => k))
  for (const [k, v] of Object.entries(query ?? {})) {
    if (names.has(k)) return undefined
    names.add(k)
    entries.push([k, v])
  }
  const hasBody = (request.body_hash !== undefined && request.body_hash !== null) || (request.body_length ?? 0) > 0
  const supplied = request.arguments
  if (supplied !== undefined) {
    const keys = Object.keys(supplied)
    if (keys.some(k => k !== 'body') || !hasBody || !('body' in supplied) || names.has('body')) return undefined
    entries.push(['body', supplied.body])
  } else if (hasBody) {
    return undefined
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays an argument
  return Object.fromEntries(entries)
}
