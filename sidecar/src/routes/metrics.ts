// GET /metrics: the Prometheus text exposition of the service's registry (docs/observability.md).
// Admin-only, like the control routes: the control token when one is configured (loopback or the
// Unix socket's peers otherwise) on the sidecar and the proxy, the service token on trust-control.
// A public proxy port never exposes it to anonymous callers: decision counts per route and reason
// tell an attacker which routes and capabilities exist and which of their probes got through.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { requireAdmin, type TrustAuthenticator } from '@gate/trust'
import type { GateMetrics } from '../observability/metrics.js'

export function createMetricsRoute(metrics: GateMetrics, auth: TrustAuthenticator, sendFailure: (res: ServerResponse, err: unknown) => void) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      requireAdmin(auth, req, 'metrics')
    } catch (err) {
      return sendFailure(res, err)
    }
    const text = await metrics.registry.metrics()
    res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
}
