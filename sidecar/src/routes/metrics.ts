// GET /metrics: the Prometheus text exposition of the service's registry (docs/observability.md).
// Admin-only, like the control routes: the control token on the sidecar and the proxy, the service
// token on trust-control.
// A public proxy port never exposes it to anonymous callers: decision counts per route and reason
// tell an attacker which routes and capabilities exist and which of their probes got through.
// GATE_METRICS_TOKEN adds a scrape-only token, so Prometheus needs no admin credential.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { bearerToken } from '@gate/sdk/server'
import { requireAdmin, type TrustAuthenticator } from '@gate/trust'
import type { GateMetrics } from '../observability/metrics.js'

export interface MetricsRouteOptions {
  metrics: GateMetrics
  /** The admin check of the service's control routes. */
  auth: TrustAuthenticator
  /** A token that reads /metrics and nothing else (GATE_METRICS_TOKEN), already validated. */
  scrapeToken?: string
  sendFailure: (res: ServerResponse, err: unknown) => void
}

export function createMetricsRoute(options: MetricsRouteOptions) {
  const { metrics, auth, sendFailure } = options
  const scrapeDigest = options.scrapeToken === undefined ? undefined : sha256(options.scrapeToken)
  const isScraper = (req: IncomingMessage): boolean => {
    if (scrapeDigest === undefined) return false
    const presented = bearerToken(req)
    // constant time over equal-length digests (never `===` on tokens)
    return presented !== undefined && timingSafeEqual(sha256(presented), scrapeDigest)
  }
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!isScraper(req)) {
      try {
        requireAdmin(auth, req, 'metrics')
      } catch (err) {
        return sendFailure(res, err)
      }
    }
    const text = await metrics.registry.metrics()
    res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
