// The HTTP grant convention (docs/capabilities.md): a ToolGrant covers an HTTP request when its
// `server_id` is "http" (or "*") and its `tool_name` names the request as "{METHOD} {route_pattern}",
// the route's operationId, or a wildcard form:
//   "*"                    every route and method
//   "POST *"  / "* /pets"  every route of a method / every method of a route
//   "POST /pets/*"         the route and every route below it, segment-wise
// Grants carrying constraints or requiring DPoP are never matched here (fail closed: this authority
// cannot evaluate them), and neither is a grant for another server.
import type { ToolGrant } from '@gate/sdk'

export interface GrantTarget {
  method: string
  routePattern: string
  operationId?: string
}

export interface GrantMatch {
  index: number
  grant: ToolGrant
}

/** The canonical scope string a request needs (DenyDetails.required_scope). */
export function requiredScope(target: GrantTarget): string {
  return `http:${target.method} ${target.routePattern}`
}

/** The scope a grant carries, in the same notation. */
export function grantScope(grant: ToolGrant): string {
  return `${grant.server_id}:${grant.tool_name}`
}

/** The first grant of `grants` that covers the target, or why none does. */
export function findGrant(grants: readonly ToolGrant[], target: GrantTarget): GrantMatch | { reason: string } {
  let unsupported: string | undefined
  for (let index = 0; index < grants.length; index++) {
    const grant = grants[index] as ToolGrant
    if (grant.server_id !== 'http' && grant.server_id !== '*') continue
    if (!toolNameCovers(grant.tool_name, target)) continue
    if (grant.constraints !== undefined && grant.constraints.length > 0) {
      unsupported = 'the matching grant carries constraints this HTTP authority cannot evaluate'
      continue
    }
    if (grant.dpop_required === true) {
      unsupported = 'the matching grant requires a DPoP proof, which HTTP requests do not carry'
      continue
    }
    return { index, grant }
  }
  return { reason: unsupported ?? `no grant covers ${target.method} ${target.routePattern}` }
}

/** True when a grant's tool_name covers the target. */
export function toolNameCovers(toolName: string, target: GrantTarget): boolean {
  if (toolName === '*') return true
  if (target.operationId !== undefined && toolName === target.operationId) return true
  const space = toolName.indexOf(' ')
  if (space <= 0) return false
  const method = toolName.slice(0, space)
  const pattern = toolName.slice(space + 1)
  if (method !== '*' && method !== target.method) return false
  if (pattern === '*' || pattern === target.routePattern) return true
  if (pattern.endsWith('/*')) {
    const prefix = pattern.slice(0, -2)
    return target.routePattern === prefix || target.routePattern.startsWith(prefix + '/')
  }
  return false
}
