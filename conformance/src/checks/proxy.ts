// spec 01, Proxy traffic and Forwarding rules, with Gate's route-matching and header rules
// (docs/security.md): what a proxy such as `gate api protect` lets reach its upstream. The suite is that
// upstream (--proxy-upstream, fakes/recording-upstream.ts) and records every request that arrives, so
// "never forwarded" is observed, not inferred from the proxy's answer.
import type { HttpMethod } from '@gate/sdk'
import { defineCheck, fail, skip } from '../check.js'
import type { CheckContext } from '../context.js'
import { snippet } from '../context.js'
import type { RecordingUpstream } from '../fakes/recording-upstream.js'
import type { HttpAnswer } from '../http-client.js'
import { concretePath, slashVariants, type PolicyRoute } from '../policy.js'

const SAFE: readonly HttpMethod[] = ['GET', 'HEAD', 'OPTIONS']

/** Client headers an upstream (IIS, Symfony, nginx, Envoy set-ups) may route on, or take for Gate's word. */
const HOSTILE_HEADERS: Readonly<Record<string, string>> = {
  'x-original-url': '/gate-conformance-forged',
  'x-rewrite-url': '/gate-conformance-forged',
  'x-original-method': 'DELETE',
  'x-forwarded-prefix': '/gate-conformance-forged',
  'x-gate-receipt-id': 'gate-conformance-forged',
  'x-gate-verdict': 'allow',
}

/** An ordinary header, to show the proxy forwards headers at all. */
const KEPT_HEADER = 'x-conformance-kept'

/** Deny-by-default routes of a safe method: the method rule would forward a request that misses them. */
function protectedSafeRoutes(ctx: CheckContext): PolicyRoute[] {
  const routes = ctx.routes(r => SAFE.includes(r.method) && r.decision === 'DenyByDefault')
  if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no deny-by-default GET, HEAD or OPTIONS route`)
  return routes
}

/**
 * Sends `method path` through the proxy and fails unless it was refused (4xx with X-Gate-Receipt-Id:
 * spec 01, a receipt is signed for every deny) and the upstream never received it.
 */
async function expectNotForwarded(ctx: CheckContext, upstream: RecordingUpstream, method: HttpMethod, path: string, what: string): Promise<void> {
  const before = upstream.received.length
  const res = await ctx.http.send({ method, path, headers: { accept: 'application/json' } })
  const reached = upstream.received.slice(before).some(r => r.url === path)
  if (reached) fail(`${method} ${path} (${what}) reached the upstream (the proxy answered ${res.status})`)
  if (res.status < 400 || res.status >= 500) fail(`${method} ${path} (${what}): the proxy answered ${res.status}, expected a refusal (403 without a capability) ${snippet(res.text)}`)
  if (res.headers['x-gate-receipt-id'] === undefined) fail(`${method} ${path} (${what}): the ${res.status} has no X-Gate-Receipt-Id (every deny is signed, spec 01)`)
}

function forwardedAs(upstream: RecordingUpstream, before: number, path: string) {
  return upstream.received.slice(before).find(r => r.url === path)
}

function describeAnswer(res: HttpAnswer): string {
  return `${res.status} ${snippet(res.text)}`
}

export const PROXY_CHECKS = [
  defineCheck({
    id: 'proxy.routing-headers-dropped',
    description:
      "client headers an upstream could route on or take for Gate's (X-Original-URL, X-Rewrite-URL, X-Original-Method, X-Forwarded-Prefix, X-Gate-*) never reach the upstream with the client's value; the request is forwarded without them or refused",
    specRef: 'Gate: docs/security.md (nothing else to route on; issue 37); 01 Forwarding rules',
    required: true,
    needs: ['proxy'],
    async run(ctx) {
      const upstream = ctx.upstream()
      // a GET no route matches: the method rule allows it, so the proxy forwards it
      const base = ctx.unmatched()
      const plainBefore = upstream.received.length
      const plain = await ctx.http.send({ method: 'GET', path: base, headers: { [KEPT_HEADER]: 'kept' } })
      const control = forwardedAs(upstream, plainBefore, base)
      if (plain.status !== 200 || control === undefined) fail(`GET ${base} (no route: the method rule allows it) was not forwarded: the proxy answered ${describeAnswer(plain)}`)
      if (control.headers.get(KEPT_HEADER)?.[0] !== 'kept') fail(`GET ${base}: the ordinary header ${KEPT_HEADER} did not reach the upstream, so this check cannot tell what the proxy drops`)
      let n = 0
      for (const [name, value] of Object.entries(HOSTILE_HEADERS)) {
        const path = `${base}-${++n}`
        const before = upstream.received.length
        const res = await ctx.http.send({ method: 'GET', path, headers: { [name]: value, [KEPT_HEADER]: 'kept' } })
        const got = forwardedAs(upstream, before, path)
        if (got === undefined) {
          // refusing the request outright keeps the header from the upstream too
          if (res.status >= 400 && res.status < 500) continue
          fail(`GET ${path} with ${name}: neither forwarded nor refused: ${describeAnswer(res)}`)
        }
        if (got.headers.get(name)?.includes(value) === true) fail(`GET ${path}: the upstream received the client's ${name}: ${value}`)
      }
    },
  }),
  defineCheck({
    id: 'proxy.path-variants-not-forwarded',
    description:
      'a path an upstream may route to a deny-by-default GET route (a trailing slash, %2F for a separator or a trailing slash, both) is refused with a receipt and never reaches the upstream without a capability',
    specRef: 'Gate: docs/security.md (route matching: every reading an upstream may apply, the strictest decides; issue 37); 01 States',
    required: true,
    needs: ['proxy'],
    async run(ctx) {
      const upstream = ctx.upstream()
      for (const route of protectedSafeRoutes(ctx)) {
        for (const path of slashVariants(concretePath(route.pattern))) await expectNotForwarded(ctx, upstream, route.method, path, `route ${route.method} ${route.pattern}`)
      }
    },
  }),
  defineCheck({
    id: 'proxy.format-suffix-not-forwarded',
    description:
      'a format suffix on a deny-by-default GET route ending in a literal (GET /admin/export.json for GET /admin/export, as Spring and Rails route it) is refused with a receipt and never reaches the upstream',
    specRef: 'Gate: docs/security.md (format suffixes; issue 37)',
    required: false,
    needs: ['proxy'],
    async run(ctx) {
      const upstream = ctx.upstream()
      // a literal last segment: `{id}` would take `x.json` whole, the same route either way
      const routes = protectedSafeRoutes(ctx).filter(r => /\/[^/{}.]+$/.test(r.pattern))
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no deny-by-default GET route whose last segment is a literal`)
      for (const route of routes) {
        const path = concretePath(route.pattern)
        for (const suffixed of [`${path}.json`, `${path}.tar.gz`]) await expectNotForwarded(ctx, upstream, route.method, suffixed, `route ${route.method} ${route.pattern}`)
      }
    },
  }),
]
