// spec 01, States and transitions (policy classification and the outcome table) and spec 02, HttpMethod
// and Verdict: what each kind of route answers without a capability. Routes come from the document the
// sidecar was started with; a check whose kind of route the document lacks is skipped.
import { canonicalJson, type HttpMethod } from '@gate/sdk'
import { defineCheck, fail, skip } from '../check.js'
import type { CheckContext, Evaluation } from '../context.js'
import { describeVerdict, expectAllow, expectCapabilityDeny, expectSchema } from '../expect.js'
import { buildRequest } from '../gate-request.js'
import { concretePath, PARAM_VALUE, patternMatches, slashVariants, type PolicyRoute } from '../policy.js'

const UNSAFE: readonly HttpMethod[] = ['POST', 'PUT', 'PATCH', 'DELETE']
const SAFE: readonly HttpMethod[] = ['GET', 'HEAD', 'OPTIONS']

/** A session-scoped allow (spec 02): verdict allow with a passing DefaultPolicyGuard entry. */
function expectSessionAllow(e: Evaluation, what: string): void {
  expectAllow(e, what)
  if (!(e.answer.evidence ?? []).some(g => g.guard_name === 'DefaultPolicyGuard' && g.verdict === true)) {
    fail(`${what}: allow without a passing DefaultPolicyGuard evidence entry: ${canonicalJson(e.answer.evidence ?? null)}`)
  }
}

function expectPattern(e: Evaluation, pattern: string, what: string): void {
  if (e.answer.receipt.route_pattern !== pattern) fail(`${what}: receipt route_pattern is ${JSON.stringify(e.answer.receipt.route_pattern)}, expected ${JSON.stringify(pattern)}`)
}

async function evaluateRoute(ctx: CheckContext, route: PolicyRoute): Promise<[Evaluation, string]> {
  const what = `${route.method} ${concretePath(route.pattern)} (route ${route.pattern})`
  return [await ctx.evaluate(ctx.requestFor(route)), what]
}

/** `path` with the literal segments of `pattern` upper-cased (parameter values as they were). */
function upperLiterals(path: string, pattern: string): string {
  return mapLiterals(path, pattern, s => s.toUpperCase())
}

/** `path` with the literal segments of `pattern` in alternating case (`AdMiN`). */
function alternateLiterals(path: string, pattern: string): string {
  return mapLiterals(path, pattern, s => [...s].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join(''))
}

function mapLiterals(path: string, pattern: string, f: (segment: string) => string): string {
  const templates = pattern.split('/')
  return path
    .split('/')
    .map((segment, i) => (/\{[^{}]+\}/.test(templates[i] ?? '') ? segment : f(segment)))
    .join('/')
}

export const VERDICT_MATRIX_CHECKS = [
  defineCheck({
    id: 'evaluate.allow-safe-get',
    description: 'GET on a route without x-gate overrides is a session-scoped allow: verdict allow, passing DefaultPolicyGuard evidence',
    specRef: '01 States (classification step 3); 02 States (safe methods)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => r.method === 'GET' && !r.approvalRequired && r.sideEffects === undefined)
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no GET route without x-gate overrides`)
      for (const route of routes) {
        const [e, what] = await evaluateRoute(ctx, route)
        expectSessionAllow(e, what)
        expectPattern(e, route.pattern, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.allow-safe-methods-unmatched',
    description: 'GET, HEAD and OPTIONS on a path no route matches fall back to the method rule: session-scoped allow',
    specRef: '01 States (unmatched path falls back to the method rule); 02 HttpMethod',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      for (const method of SAFE) {
        const e = await ctx.evaluate(buildRequest({ method, path }))
        expectSessionAllow(e, `${method} ${path}`)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.deny-unsafe-no-token',
    description: 'POST, PUT, PATCH and DELETE routes without x-gate overrides, presented no capability, are denied by CapabilityGuard with 403',
    specRef: '01 States (DenyByDefault, no capability token); 02 Verdict',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => UNSAFE.includes(r.method) && !r.approvalRequired && r.sideEffects === undefined)
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no unsafe-method route without x-gate overrides`)
      for (const route of routes) {
        const [e, what] = await evaluateRoute(ctx, route)
        expectCapabilityDeny(e, what)
        expectPattern(e, route.pattern, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.deny-unsafe-unmatched',
    description: 'POST, PUT, PATCH and DELETE on a path no route matches are denied by CapabilityGuard (method rule); the receipt records the raw path',
    specRef: '01 States (unmatched path, method rule); 02 States',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      for (const method of UNSAFE) {
        const e = await ctx.evaluate(buildRequest({ method, path, body: method === 'DELETE' ? null : '{}' }))
        expectCapabilityDeny(e, `${method} ${path}`)
        expectPattern(e, path, `${method} ${path}`)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.side-effects-false-allows',
    description: 'x-gate-side-effects: false makes a route (even POST) a session-scoped allow without a capability',
    specRef: '01 Extension keys (x-gate-side-effects); States (classification step 2)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => r.sideEffects === false && !r.approvalRequired)
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no route with x-gate-side-effects: false`)
      for (const route of routes) {
        const [e, what] = await evaluateRoute(ctx, route)
        expectSessionAllow(e, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.side-effects-true-denies',
    description: 'x-gate-side-effects: true makes a route (even GET) deny-by-default: denied by CapabilityGuard without a capability',
    specRef: '01 Extension keys (x-gate-side-effects); States (classification step 2)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => r.sideEffects === true && !r.approvalRequired)
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no route with x-gate-side-effects: true`)
      for (const route of routes) {
        const [e, what] = await evaluateRoute(ctx, route)
        expectCapabilityDeny(e, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.approval-required-denies',
    description: 'x-gate-approval-required: true makes a route deny-by-default over the method and x-gate-side-effects: false',
    specRef: '01 States (classification step 1, highest precedence)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => r.approvalRequired)
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no route with x-gate-approval-required: true`)
      for (const route of routes) {
        const [e, what] = await evaluateRoute(ctx, route)
        expectCapabilityDeny(e, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.head-decided-as-get',
    description: 'HEAD on the path of a deny-by-default GET route is denied by CapabilityGuard without a capability (servers answer HEAD with the GET handler); on a safe GET route it is a session-scoped allow',
    specRef: 'Gate: docs/security.md (route matching; issue 24); 01 States',
    required: true,
    async run(ctx) {
      const protectedGets = ctx.routes(r => r.method === 'GET' && r.decision === 'DenyByDefault')
      if (protectedGets.length === 0) skip(`the document (${ctx.policy.source}) has no deny-by-default GET route`)
      const hasHead = (pattern: string) => ctx.policy.routes.some(r => r.method === 'HEAD' && r.pattern === pattern)
      for (const route of protectedGets) {
        const what = `HEAD ${concretePath(route.pattern)} (GET ${route.pattern} is deny-by-default)`
        const e = await ctx.evaluate(ctx.requestFor({ ...route, method: 'HEAD' }))
        expectCapabilityDeny(e, what)
      }
      const safe = ctx.routes(r => r.method === 'GET' && r.decision === 'SessionAllow' && !hasHead(r.pattern))
      for (const route of safe) {
        const [e, what] = [await ctx.evaluate(ctx.requestFor({ ...route, method: 'HEAD' })), `HEAD ${concretePath(route.pattern)}`]
        expectSessionAllow(e, what)
        expectPattern(e, route.pattern, what)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.letter-case-denied',
    description: "a path that differs from a deny-by-default route's only in letter case (GET /ADMIN/EXPORT for GET /admin/export) is denied by CapabilityGuard without a capability, never the looser method rule",
    specRef: 'Gate: docs/security.md (route matching: case-insensitive by default, the closest safe policy otherwise; issue 24)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => r.decision === 'DenyByDefault' && /[a-z]/.test(r.pattern.replace(/\{[^{}]*\}/g, '')))
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no deny-by-default route with a letter in a literal segment`)
      for (const route of routes) {
        const exact = concretePath(route.pattern)
        for (const path of [upperLiterals(exact, route.pattern), alternateLiterals(exact, route.pattern)]) {
          expectCapabilityDeny(await ctx.evaluate(ctx.requestFor({ ...route, pattern: path })), `${route.method} ${path} (route ${route.method} ${route.pattern})`)
        }
      }
    },
  }),
  defineCheck({
    id: 'evaluate.path-readings-denied',
    description:
      'a path an upstream may route to a deny-by-default GET route (a trailing slash, %2F for a separator or a trailing slash, both: GET /admin/export%2F, /admin%2Fexport%2F for GET /admin/export) is denied without a capability, never the looser method rule',
    specRef: 'Gate: docs/security.md (route matching: every reading an upstream may apply, the strictest decides; issue 37)',
    required: true,
    async run(ctx) {
      const routes = ctx.routes(r => SAFE.includes(r.method) && r.decision === 'DenyByDefault')
      if (routes.length === 0) skip(`the document (${ctx.policy.source}) has no deny-by-default GET, HEAD or OPTIONS route`)
      for (const route of routes) {
        for (const path of slashVariants(concretePath(route.pattern))) {
          expectCapabilityDeny(await ctx.evaluate(ctx.requestFor({ ...route, pattern: path })), `${route.method} ${path} (route ${route.method} ${route.pattern})`)
        }
      }
    },
  }),
  defineCheck({
    id: 'evaluate.route-pattern-rematched',
    description: "the sidecar ignores the client's route_pattern and records the pattern it matched itself (or the raw path when none)",
    specRef: '02 GateHttpRequest (route_pattern); 01 Proxy receipt field sources',
    required: true,
    async run(ctx) {
      const route = ctx.policy.routes.find(r => r.pattern.includes('{')) ?? ctx.route('route', () => true)
      const lie = ctx.policy.routes.find(r => r.pattern !== route.pattern)?.pattern ?? '/gate-conformance/claimed/{x}'
      const matched = await ctx.evaluate({ ...ctx.requestFor(route), route_pattern: lie })
      expectPattern(matched, route.pattern, `${route.method} ${concretePath(route.pattern)} claiming route_pattern ${lie}`)
      const path = ctx.unmatched()
      const unmatched = await ctx.evaluate(buildRequest({ method: 'GET', path, routePattern: route.pattern }))
      expectPattern(unmatched, path, `GET ${path} claiming route_pattern ${route.pattern}`)
    },
  }),
  defineCheck({
    id: 'evaluate.unmatched-records-raw-path',
    description: 'a request whose path matches no route is evaluated with the raw path as its route_pattern',
    specRef: '01 States ("its receipt records the raw path as route_pattern")',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      const e = await ctx.evaluate(buildRequest({ method: 'GET', path, query: { page: '2' }, routePattern: '/{anything}' }))
      expectPattern(e, path, `GET ${path}?page=2`)
    },
  }),
  defineCheck({
    id: 'evaluate.param-matches-one-segment',
    description: 'a {param} segment matches exactly one path segment: /pets/x matches /pets/{id}, /pets/x/y (two segments) does not',
    specRef: '01 States (route matching compares segments; {param} matches a single segment)',
    required: true,
    async run(ctx) {
      const route = ctx.route('route whose pattern ends in a {param} segment', r => /\/\{[^{}/]+\}$/.test(r.pattern))
      const one = await ctx.evaluate(ctx.requestFor(route))
      expectPattern(one, route.pattern, `${route.method} ${concretePath(route.pattern)}`)
      const twoPath = `${concretePath(route.pattern)}/${PARAM_VALUE}-${ctx.unique()}`
      if (ctx.policy.routes.some(r => r.method === route.method && patternMatches(r.pattern, twoPath))) {
        skip(`${twoPath} matches another route of the document`)
      }
      const two = await ctx.evaluate(ctx.requestFor({ ...route, pattern: twoPath }))
      expectPattern(two, twoPath, `${route.method} ${twoPath} (one segment too many for ${route.pattern})`)
    },
  }),
  defineCheck({
    id: 'evaluate.supplemental-authorization-denied',
    description: 'a request carrying supplemental_authorization is denied (200, verdict deny), not silently evaluated as if absent',
    specRef: '02 GateHttpRequest (supplemental_authorization: "denied at the authority boundary, not silently ignored")',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      const e = await ctx.evaluate(buildRequest({ method: 'GET', path, extra: { supplemental_authorization: { kind: 'conformance', grants: ['*'] } } }))
      if (e.answer.verdict.verdict !== 'deny') fail(`GET ${path} with supplemental_authorization: expected deny, got ${describeVerdict(e)}`)
    },
  }),
  defineCheck({
    id: 'evaluate.deny-details',
    description: 'a deny\'s details, when present, hold only DenyDetails members with string or null values, not all empty (else the key is omitted)',
    specRef: '02 DenyDetails ("the whole details key is omitted when all are empty")',
    required: true,
    async run(ctx) {
      const known = new Set(['tool_name', 'tool_server', 'requested_action', 'required_scope', 'granted_scope', 'reason_code', 'receipt_id', 'hint', 'docs_url'])
      const path = ctx.unmatched()
      const denies = [(await ctx.samples()).deny, await ctx.evaluate(buildRequest({ method: 'DELETE', path }), { capability: 'not-a-token' })]
      for (const e of denies) {
        for (const verdict of [e.answer.verdict, e.answer.receipt.verdict]) {
          const details = (verdict as { details?: unknown }).details
          if (details === undefined) continue
          const what = `${e.sent.method} ${e.sent.path}: deny details ${canonicalJson(details)}`
          if (typeof details !== 'object' || details === null || Array.isArray(details)) fail(`${what} is not an object`)
          const entries = Object.entries(details)
          for (const [k, v] of entries) {
            if (!known.has(k)) fail(`${what} has a member ${k} DenyDetails does not define`)
            if (v !== null && typeof v !== 'string') fail(`${what}: ${k} is neither a string nor null`)
          }
          if (entries.every(([, v]) => v === null || v === '')) fail(`${what} is present although every field is empty`)
        }
      }
    },
  }),
  defineCheck({
    id: 'evaluate.verdict-matches-receipt',
    description: "the answer's verdict is exactly the signed receipt's verdict",
    specRef: '02 EvaluateResponse; HttpReceipt (verdict)',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        if (canonicalJson(e.answer.verdict) !== canonicalJson(e.answer.receipt.verdict)) {
          fail(`${e.sent.method} ${e.sent.path}: answer verdict ${canonicalJson(e.answer.verdict)} but receipt verdict ${canonicalJson(e.answer.receipt.verdict)}`)
        }
      }
    },
  }),
  defineCheck({
    id: 'evaluate.response-schema',
    description: 'every 200 answer of /gate/evaluate (allow and deny) validates against gate.http.evaluate_response.v1',
    specRef: '02 EvaluateResponse; Versioning (schemas/v1)',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) expectSchema('gate.http.evaluate_response.v1', e.http.json, `${e.sent.method} ${e.sent.path}`)
    },
  }),
]
