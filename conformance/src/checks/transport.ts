// spec 02, "What the service does" (transport rules) and Endpoints: JSON everywhere, and /gate/evaluate
// reports evaluation health in its status, never the policy outcome.
import { defineCheck, fail } from '../check.js'
import { expectJsonContentType, expectStatus } from '../expect.js'
import { buildRequest } from '../gate-request.js'

export const TRANSPORT_CHECKS = [
  defineCheck({
    id: 'transport.json-content-type',
    description: 'every /gate answer (evaluate, verify, live, health; success and error) has Content-Type application/json',
    specRef: '02 What the service does, transport rule 3',
    required: true,
    async run(ctx) {
      const { allow } = await ctx.samples()
      const answers = [
        ['GET /gate/live', await ctx.get('/gate/live')],
        ['GET /gate/health', await ctx.get('/gate/health')],
        ['POST /gate/evaluate (allow)', allow.http],
        ['POST /gate/evaluate (bad JSON)', await ctx.evaluateRaw('{"request_id":')],
        ['POST /gate/verify (receipt)', await ctx.verifyRaw(allow.answer.receipt)],
        ['POST /gate/verify (bad JSON)', await ctx.verifyRaw('{"id":')],
      ] as const
      for (const [what, res] of answers) expectJsonContentType(res, what)
    },
  }),
  defineCheck({
    id: 'transport.evaluate-200-for-deny',
    description: 'POST /gate/evaluate answers 200 for a deny verdict exactly as for an allow (the status reports evaluation health)',
    specRef: '02 Endpoints, rules',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      for (const method of ['POST', 'DELETE'] as const) {
        const res = await ctx.evaluateRaw(buildRequest({ method, path, body: method === 'POST' ? '{}' : null }))
        expectStatus(res, 200, `${method} ${path} without a capability`)
        const verdict = (res.json as { verdict?: { verdict?: unknown } } | undefined)?.verdict?.verdict
        if (verdict !== 'deny') fail(`${method} ${path} without a capability: expected a deny verdict in the 200 answer, got ${String(verdict)}`)
      }
    },
  }),
]
