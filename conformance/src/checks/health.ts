// spec 02, HealthResponse and Endpoints: /gate/live (process liveness, empty backend fields) and
// /gate/health (200 when healthy, 503 when degraded or unhealthy).
import { defineCheck, fail } from '../check.js'
import { expectJsonContentType, expectSchema, expectStatus } from '../expect.js'

interface Health {
  status?: unknown
  version?: unknown
  receipt_backend?: unknown
  revocation_backend?: unknown
  kernel_key?: unknown
}

export const HEALTH_CHECKS = [
  defineCheck({
    id: 'health.live',
    description: 'GET /gate/live answers 200 with a HealthResponse whose backend fields are empty and version is set',
    specRef: '02 Endpoints; HealthResponse',
    required: true,
    async run(ctx) {
      const res = await ctx.get('/gate/live')
      expectStatus(res, 200, 'GET /gate/live')
      expectJsonContentType(res, 'GET /gate/live')
      expectSchema('gate.http.health.v1', res.json, 'GET /gate/live')
      const h = res.json as Health
      if (h.receipt_backend !== '' || h.revocation_backend !== '') {
        fail(`GET /gate/live: receipt_backend and revocation_backend must be empty, got "${String(h.receipt_backend)}" and "${String(h.revocation_backend)}"`)
      }
      if (typeof h.version !== 'string' || h.version.trim() === '') fail('GET /gate/live: version is empty')
    },
  }),
  defineCheck({
    id: 'health.ready',
    description: 'GET /gate/health answers 200 with status healthy and both backends named, or 503 with degraded/unhealthy',
    specRef: '02 Endpoints; HealthResponse; States (health status)',
    required: true,
    async run(ctx) {
      const res = await ctx.get('/gate/health')
      expectJsonContentType(res, 'GET /gate/health')
      expectSchema('gate.http.health.v1', res.json, 'GET /gate/health')
      const h = res.json as Health
      if (res.status === 200) {
        if (h.status !== 'healthy') fail(`GET /gate/health answered 200 with status "${String(h.status)}" (200 means healthy)`)
        if (h.receipt_backend !== 'durable' && h.receipt_backend !== 'ephemeral') fail(`GET /gate/health: receipt_backend "${String(h.receipt_backend)}", expected durable or ephemeral`)
        if (!['durable', 'remote', 'ephemeral'].includes(String(h.revocation_backend))) fail(`GET /gate/health: revocation_backend "${String(h.revocation_backend)}", expected durable, remote or ephemeral`)
      } else if (res.status === 503) {
        if (h.status !== 'degraded' && h.status !== 'unhealthy') fail(`GET /gate/health answered 503 with status "${String(h.status)}" (503 means degraded or unhealthy)`)
      } else {
        fail(`GET /gate/health answered ${res.status}; expected 200 or 503`)
      }
    },
  }),
  defineCheck({
    id: 'health.live-kernel-key',
    description: "GET /gate/live names the signer's public key (kernel_key) and it is the key of the receipts the sidecar signs",
    specRef: 'Gate: docs/architecture.md (additive kernel_key for local verification)',
    required: false,
    async run(ctx) {
      const res = await ctx.get('/gate/live')
      const key = (res.json as Health | undefined)?.kernel_key
      if (typeof key !== 'string') fail('GET /gate/live has no kernel_key')
      const { all } = await ctx.samples()
      for (const e of all) {
        if (e.answer.receipt.kernel_key !== key) fail(`receipt for ${e.sent.method} ${e.sent.path} is signed by ${e.answer.receipt.kernel_key}, /gate/live names ${key}`)
      }
    },
  }),
]
