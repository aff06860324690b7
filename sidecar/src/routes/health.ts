// GET /gate/live (process liveness, empty backend fields, plus the signer's public key so SDKs can
// verify receipts locally) and GET /gate/health (readiness: 503 when the receipt store is unreachable).
// Both carry the capability negotiation envelope (spec 03, gate.capabilities.v1): what this build does,
// such as verifying hybrid signatures, for a peer to intersect with its own.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { localCapabilities, type HealthResponse } from '@gate/sdk'
import { sendJson } from '@gate/sdk/server'
import type { RouteContext } from './context.js'
import type { FleetHealth } from '../fleet/fleet-health.js'

export function createLiveRoute(ctx: RouteContext) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    const body: HealthResponse = {
      status: 'healthy',
      version: ctx.version,
      receipt_backend: '',
      revocation_backend: '',
      kernel_key: ctx.kernel.signer.publicKey,
      capabilities: localCapabilities(),
    }
    sendJson(res, 200, body, { 'cache-control': 'no-store' })
  }
}

export function createHealthRoute(ctx: RouteContext) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    const healthy = ctx.receiptStoreHealthy()
    const body: HealthResponse & { fleet?: FleetHealth } = {
      status: healthy ? 'healthy' : 'unhealthy',
      version: ctx.version,
      receipt_backend: ctx.receiptBackend,
      revocation_backend: ctx.revocationBackend,
      kernel_key: ctx.kernel.signer.publicKey,
      capabilities: localCapabilities(),
    }
    // additive: trust-control's link (outbox lag, revocation staleness); a stale link does not make
    // the service unhealthy, since requests without a capability are still served
    if (ctx.fleet !== undefined) body.fleet = ctx.fleet()
    sendJson(res, healthy ? 200 : 503, body, { 'cache-control': 'no-store' })
  }
}
