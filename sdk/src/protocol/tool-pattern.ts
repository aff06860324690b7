// The tool-name grammar of grants (docs/capabilities.md): a grant's `tool_name` names a tool exactly,
// or is one of the wildcard forms
//   "*"                  every tool
//   "POST *"  "* /pets"  every route of a method / every method of a route
//   "POST /pets/*"       the route and every route below it, segment-wise
// The same grammar serves HTTP routes ("{METHOD} {route_pattern}", plus the route's operationId as an
// alias) and MCP tools (plain names). Two questions are asked of it: does a pattern match one named
// call, and does one pattern cover every call another matches (attenuation).

/** True when `pattern` matches the tool `toolName` (or one of its `aliases`, e.g. an operationId). */
export function toolPatternMatches(pattern: string, toolName: string, aliases: readonly string[] = []): boolean {
  if (pattern === '*' || pattern === toolName || aliases.includes(pattern)) return true
  const p = splitPattern(pattern)
  const n = splitPattern(toolName)
  if (p === undefined || n === undefined) return false
  if (p.method !== '*' && p.method !== n.method) return false
  return routeMatches(p.route, n.route)
}

/**
 * True when every call `child` matches is matched by `parent`. Decided from the patterns alone: a plain
 * name (an operationId, an MCP tool) is covered only by itself or "*", since the verifier does not know
 * which route an alias names.
 */
export function toolPatternCovers(parent: string, child: string): boolean {
  if (parent === '*' || parent === child) return true
  if (child === '*') return false
  const p = splitPattern(parent)
  const c = splitPattern(child)
  if (p === undefined || c === undefined) return false
  if (p.method !== '*' && p.method !== c.method) return false
  return routeCovers(p.route, c.route)
}

function splitPattern(pattern: string): { method: string; route: string } | undefined {
  const space = pattern.indexOf(' ')
  if (space <= 0 || space === pattern.length - 1) return undefined
  return { method: pattern.slice(0, space), route: pattern.slice(space + 1) }
}

function routeMatches(pattern: string, route: string): boolean {
  if (pattern === '*' || pattern === route) return true
  const prefix = prefixOf(pattern)
  return prefix !== undefined && isUnder(route, prefix)
}

function routeCovers(parent: string, child: string): boolean {
  if (parent === '*' || parent === child) return true
  if (child === '*') return false
  const parentPrefix = prefixOf(parent)
  if (parentPrefix === undefined) return false
  return isUnder(prefixOf(child) ?? child, parentPrefix)
}

/** "/pets/*" → "/pets"; undefined when the route is not a prefix wildcard. */
function prefixOf(route: string): string | undefined {
  return route.endsWith('/*') ? route.slice(0, -2) : undefined
}

// segment-wise: "/petsx" is not under "/pets"
function isUnder(route: string, prefix: string): boolean {
  return route === prefix || route.startsWith(prefix + '/')
}
