// Warnings for `POST /v1/capabilities/issue` on a sidecar that loaded an OpenAPI document: an HTTP grant
// that covers none of its routes (a typo such as "POST /pet", or a route from another document) only
// ever matches requests to paths no route matches. The token is issued all the same.
import { toolPatternMatches, type CapabilityScope } from '@gate/sdk'
import type { RouteTable } from '@gate/openapi'

/** One warning per HTTP grant of `scope` that covers no route of `routeTable`; none without a table. */
export function grantWarnings(scope: CapabilityScope, routeTable: RouteTable | null): string[] {
  if (routeTable === null || routeTable.routes.length === 0) return []
  const warnings: string[] = []
  for (const grant of scope.grants ?? []) {
    if (grant.server_id !== 'http' && grant.server_id !== '*') continue
    const coversARoute = routeTable.routes.some(route =>
      toolPatternMatches(grant.tool_name, `${route.method} ${route.pattern}`, route.operationId === undefined ? [] : [route.operationId]),
    )
    if (!coversARoute) {
      warnings.push(
        `grant "${grant.tool_name}" covers no route of the loaded OpenAPI document (only requests to paths no route matches); ` +
          'list its routes with: gate check --spec FILE',
      )
    }
  }
  return warnings
}
