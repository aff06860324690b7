// The other methods of every trust-control path answer 405 in the spec 03 body form, with an Allow
// header naming the methods that path has; a path this process does not mount (the cluster status on
// SQLite, /metrics when metrics are off) stays a 404.
import { MethodNotAllowedError } from '@gate/sdk'
import { sendTrustError } from '@gate/sdk/server'
import { withTrustHeaders } from '../routes/route-table.js'
import type { HostRoute } from './host-ports.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/** The 405 routes for the methods `routes` leaves out of each of their paths. */
export function methodNotAllowedRoutes(routes: readonly HostRoute[]): HostRoute[] {
  const allowed = new Map<string, Set<string>>()
  for (const route of routes) {
    let methods = allowed.get(route.path)
    if (methods === undefined) allowed.set(route.path, (methods = new Set()))
    methods.add(route.method)
  }
  const out: HostRoute[] = []
  for (const [path, methods] of allowed) {
    const allow = METHODS.filter(method => methods.has(method)).join(', ')
    for (const method of METHODS) {
      if (methods.has(method)) continue
      out.push({
        method,
        path,
        handler: withTrustHeaders((req, res, _params, url) => {
          res.setHeader('allow', allow)
          sendTrustError(res, new MethodNotAllowedError(req.method ?? method, url.pathname))
        }),
      })
    }
  }
  return out
}
