// The hosted edge's admin routes (spec 03 names /admin/health and /admin/sessions; their shapes are not
// shown, so these are Gate's, docs/mcp.md): health and counters, the sessions (never their principals
// or credentials), one session, and ending one. Every route takes the --admin-token bearer; without
// that flag they are not mounted at all.
import type { HostedEdge } from '@gate/mcp'
import { ControlAuthError, NotFoundError } from '@gate/sdk'
import { sendJson, sendTrustError } from '@gate/sdk/server'
import type { ControlAuth } from '../http/control-auth.js'
import type { Router, RouteHandler } from '../http/router.js'
import type { McpToolService } from './mcp-tool-server.js'

const LIST_LIMIT_MAX = 1000

export function mountMcpAdminRoutes(router: Router, deps: { edge: HostedEdge; auth: ControlAuth; tools: McpToolService; wrappedConnections: () => number }): void {
  const { edge, auth, tools } = deps
  const guarded = (handler: RouteHandler): RouteHandler => async (req, res, params, url) => {
    const checked = auth.check(req)
    if (!checked.ok) return sendTrustError(res, new ControlAuthError(401, 'missing or invalid bearer token (the admin token)'))
    return handler(req, res, params, url)
  }
  router.add('GET', '/admin/health', guarded((_req, res) => {
    // Started with `node --expose-gc` (never the default: a leak hunt, or the memory test), a reading
    // first collects garbage, so that it reports live memory rather than what the collector has yet to free.
    ;(globalThis as { gc?: () => void }).gc?.()
    const { rss, heapUsed } = process.memoryUsage()
    sendJson(res, 200, { status: edge.stats().draining ? 'draining' : 'ok', ...edge.stats(), serverId: tools.serverId, toolServer: tools.api === undefined ? 'mcp' : 'openapi', wrappedConnections: deps.wrappedConnections(), controlUrl: tools.service.url, rssBytes: rss, heapUsedBytes: heapUsed })
  }))
  router.add('GET', '/admin/sessions', guarded(async (_req, res, _params, url) => {
    const asked = Number(url.searchParams.get('limit') ?? 100)
    const limit = Number.isSafeInteger(asked) ? Math.min(Math.max(asked, 1), LIST_LIMIT_MAX) : 100
    sendJson(res, 200, { sessions: await edge.list(limit) })
  }))
  router.add('GET', '/admin/sessions/:id', guarded(async (_req, res, params) => {
    const view = await edge.view(params.id!)
    if (view === undefined) return sendTrustError(res, new NotFoundError(`session ${params.id}`))
    sendJson(res, 200, view)
  }))
  router.add('DELETE', '/admin/sessions/:id', guarded(async (_req, res, params) => {
    if (!(await edge.end(params.id!, 'closed'))) return sendTrustError(res, new NotFoundError(`live session ${params.id}`))
    sendJson(res, 200, { id: params.id, state: 'closed' })
  }))
}
