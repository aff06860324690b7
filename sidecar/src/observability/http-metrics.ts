// Per-request HTTP metrics for the server's own routes and for the proxy fallback, plus the scrape-time
// sources of a running server. Labels are router templates and OpenAPI route patterns only.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { GateServer, FallbackHandler } from '../http/server.js'
import { UNMATCHED_ROUTE, type GateMetrics } from './metrics.js'

/** The server's `onRouteDone` hook: each routed request, timed until its response closed. */
export function createRouteObserver(metrics: GateMetrics): (route: string, req: IncomingMessage, res: ServerResponse, seconds: number) => void {
  return (route, req, res, seconds) => metrics.recordHttp(route, req.method ?? 'GET', res.statusCode, seconds)
}

/**
 * Wraps the proxy fallback: each proxied request timed from arrival until the proxy has written its
 * answer, by the route pattern the proxy resolves with (it matched the path once; unmatched, or refused
 * before evaluation: UNMATCHED_ROUTE) and the answered status class.
 */
export function observeProxy(metrics: GateMetrics, handler: FallbackHandler): FallbackHandler {
  return (req, res, url) => {
    const started = performance.now()
    const record = (route: unknown) => metrics.recordProxy(typeof route === 'string' ? route : UNMATCHED_ROUTE, res.statusCode, (performance.now() - started) / 1000)
    return Promise.resolve(handler(req, res, url)).then(record, err => {
      record(undefined)
      throw err
    })
  }
}

/** Open connections and in-flight requests of `server`, read at scrape time. */
export function serverSources(server: GateServer): { openConnections: () => Promise<number>; inFlightRequests: () => number } {
  return {
    openConnections: () => new Promise(resolve => server.server.getConnections((err, count) => resolve(err === null ? count : 0))),
    inFlightRequests: () => server.inFlight(),
  }
}
