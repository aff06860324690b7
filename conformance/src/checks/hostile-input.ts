// Malformed and hostile input beyond the error table: escaped duplicate keys, prototype-named keys,
// non-ASCII and control characters, huge headers, deep nesting and out-of-range numbers. The sidecar
// must refuse (4xx) or evaluate correctly, never fail with a 5xx, and stay up.
import type { GateHttpRequest } from '@gate/sdk'
import { defineCheck, fail } from '../check.js'
import type { CheckContext, Evaluation } from '../context.js'
import { expectEvaluateAnswer } from '../context.js'
import { expectBadRequest, expectSchema, expectStatus } from '../expect.js'
import { buildRequest } from '../gate-request.js'
import { HttpExchangeError, type HttpAnswer } from '../http-client.js'
import { expectedContentHash, signatureProblem } from '../receipt-math.js'

/** The sidecar still answers GET /gate/live with 200. */
async function expectAlive(ctx: CheckContext, after: string): Promise<void> {
  let res: HttpAnswer
  try {
    res = await ctx.get('/gate/live')
  } catch (err) {
    fail(`after ${after}, GET /gate/live got no answer: ${(err as Error).message}`)
  }
  expectStatus(res, 200, `GET /gate/live after ${after}`)
}

/** A refusal (4xx) or a correct evaluation; never 5xx. Returns the evaluation when there was one. */
function expectRefusedOrEvaluated(res: HttpAnswer, sent: GateHttpRequest | undefined, what: string): Evaluation | undefined {
  if (res.status >= 400 && res.status < 500) return undefined
  if (res.status !== 200) fail(`${what}: answered ${res.status}; expected a 4xx refusal or a 200 evaluation`)
  const answer = expectEvaluateAnswer(res, what)
  expectSchema('gate.http.evaluate_response.v1', res.json, what)
  if (sent === undefined) return undefined
  return { sent, answer, http: res }
}

/** The receipt of an evaluation binds exactly what was sent. */
function expectBound(e: Evaluation, what: string): void {
  const expected = expectedContentHash(e.sent, e.answer.receipt.route_pattern)
  if (e.answer.receipt.content_hash !== expected) fail(`${what}: content_hash ${e.answer.receipt.content_hash}, recomputed ${expected}`)
  const problem = signatureProblem(e.answer.receipt as unknown as Record<string, unknown>)
  if (problem !== undefined) fail(`${what}: ${problem}`)
}

export const HOSTILE_INPUT_CHECKS = [
  defineCheck({
    id: 'hostile.duplicate-query-key-escaped',
    description: 'a query key repeated in another JSON spelling ("a" and "\\u0061") is still a duplicate: 400 gate_bad_request',
    specRef: '02 Errors (duplicate query key)',
    required: true,
    async run(ctx) {
      const body = JSON.stringify({ ...buildRequest({ method: 'GET', path: ctx.unmatched() }), query: { a: '1' } })
      expectEvaluateAnswer(await ctx.evaluateRaw(body.replace('"query":{"a":"1"}', '"query":{"a":"1","\\u0062":"2"}')), 'query {"a":"1","\\u0062":"2"} (control: escaped but distinct keys)')
      expectBadRequest(await ctx.evaluateRaw(body.replace('"query":{"a":"1"}', '"query":{"a":"1","\\u0061":"2"}')), 'query {"a":"1","\\u0061":"2"}')
      expectBadRequest(await ctx.evaluateRaw(body.replace('"query":{"a":"1"}', '"query":{"\\u00e9":"1","é":"2"}')), 'query {"\\u00e9":"1","é":"2"}')
    },
  }),
  defineCheck({
    id: 'hostile.raw-credential-headers',
    description: 'a GateHttpRequest whose headers carry raw credentials (Authorization, Cookie, Proxy-Authorization, any case) is refused with 400',
    specRef: 'Gate: docs/security.md (the request schema rejects them); 02 GateHttpRequest (headers: adapters must not include raw credential headers)',
    required: false,
    async run(ctx) {
      const path = ctx.unmatched()
      expectEvaluateAnswer(await ctx.evaluateRaw(buildRequest({ method: 'GET', path, extra: { headers: { accept: 'application/json' } } })), 'headers {accept} (control)')
      for (const name of ['authorization', 'Cookie', 'PROXY-AUTHORIZATION']) {
        expectBadRequest(await ctx.evaluateRaw(buildRequest({ method: 'GET', path, extra: { headers: { accept: 'application/json', [name]: 'Bearer secret-token' } } })), `headers with ${name}`)
      }
    },
  }),
  defineCheck({
    id: 'hostile.proto-keys',
    description: 'query keys named __proto__, constructor and toString are ordinary keys: evaluated, and bound by content_hash',
    specRef: '02 GateHttpRequest (query: map string to string; Content hash)',
    required: true,
    async run(ctx) {
      // JSON.parse makes "__proto__" an own member, as a JSON decoder on the sidecar should
      const query = JSON.parse('{"__proto__":"p","constructor":"c","toString":"t","hasOwnProperty":"h"}') as Record<string, string>
      const sent = buildRequest({ method: 'GET', path: ctx.unmatched(), query })
      const e = await ctx.evaluate(sent)
      expectBound(e, 'query with __proto__, constructor, toString, hasOwnProperty keys')
    },
  }),
  defineCheck({
    id: 'hostile.unicode-content',
    description: 'non-ASCII paths and query keys (accents, astral characters, U+FFFF) are bound by a content_hash whose keys sort by UTF-16 code units',
    specRef: '02 Content hash (RFC 8785 canonical JSON); Versioning',
    required: true,
    async run(ctx) {
      // U+10000 sorts before U+FFFF in UTF-16 code units (0xD800 < 0xFFFF), after it by code point
      const query = { '\u{10000}': 'astral', '\uFFFF': 'bmp-last', 'ü': 'umlaut', z: 'z', Z: 'Z', '\u00A0': 'nbsp', '\u{1F600}': '\u{1F600}' }
      const sent = buildRequest({ method: 'GET', path: `${ctx.unmatched()}/ünïcödé/\u2603/\u{1F600}`, query })
      expectBound(await ctx.evaluate(sent), 'non-ASCII path and query keys')
    },
  }),
  defineCheck({
    id: 'hostile.control-characters',
    description: 'NUL, CR/LF and other control characters in the path and query are refused (4xx) or evaluated and bound exactly; never 5xx',
    specRef: '02 GateHttpRequest; Content hash',
    required: true,
    async run(ctx) {
      const sent = buildRequest({ method: 'GET', path: `${ctx.unmatched()}/a\u0000b/c\r\nX-Injected: 1`, query: { 'k\u0007': 'v\u0000\r\n', '\u001b[31m': 'ansi' } })
      const e = expectRefusedOrEvaluated(await ctx.evaluateRaw(sent), sent, 'control characters in path and query')
      if (e !== undefined) expectBound(e, 'control characters in path and query')
      await expectAlive(ctx, 'control characters')
    },
  }),
  defineCheck({
    id: 'hostile.large-integers',
    description: 'timestamp and body_length beyond 2^53 or 2^64, and exponent notation, are refused (4xx) or evaluated; never 5xx',
    specRef: '02 GateHttpRequest (timestamp, body_length: integer)',
    required: true,
    async run(ctx) {
      const body = JSON.stringify(buildRequest({ method: 'GET', path: ctx.unmatched() }))
      const variants: [string, string][] = [
        ['timestamp 2^64', body.replace(/"timestamp":\d+/, '"timestamp":18446744073709551616')],
        ['timestamp 1e400', body.replace(/"timestamp":\d+/, '"timestamp":1e400')],
        ['body_length 2^63', body.replace(/}$/, ',"body_length":9223372036854775808}')],
        ['body_length -0', body.replace(/}$/, ',"body_length":-0}')],
        ['timestamp 1.0e3', body.replace(/"timestamp":\d+/, '"timestamp":1.0e3')],
      ]
      for (const [what, text] of variants) expectRefusedOrEvaluated(await ctx.evaluateRaw(text), undefined, what)
      await expectAlive(ctx, 'out-of-range integers')
    },
  }),
  defineCheck({
    id: 'hostile.deep-nesting',
    description: 'an arguments object nested 100 000 levels deep is refused (4xx) or evaluated; never 5xx, and the sidecar stays up',
    specRef: '02 GateHttpRequest (arguments: object); Limits',
    required: true,
    async run(ctx) {
      const depth = 100_000
      const body = JSON.stringify(buildRequest({ method: 'GET', path: ctx.unmatched() })).replace(/}$/, `,"arguments":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}`)
      expectRefusedOrEvaluated(await ctx.evaluateRaw(body), undefined, `arguments nested ${depth} deep`)
      await expectAlive(ctx, 'a deeply nested body')
    },
  }),
  defineCheck({
    id: 'hostile.huge-headers',
    description: 'an evaluate request with 1 MiB of headers is refused (4xx or closed connection) or evaluated; never 5xx, and the sidecar stays up',
    specRef: '02 Endpoints (POST /gate/evaluate); fail closed',
    required: true,
    async run(ctx) {
      const sent = buildRequest({ method: 'GET', path: ctx.unmatched() })
      const headers: Record<string, string> = {}
      for (let i = 0; i < 16; i++) headers[`x-conformance-padding-${i}`] = 'x'.repeat(64 * 1024)
      let res: HttpAnswer | undefined
      try {
        res = await ctx.evaluateRaw(sent, headers)
      } catch (err) {
        // a server may refuse by closing the connection: acceptable, as long as it stays up
        if (!(err instanceof HttpExchangeError && err.kind === 'connection')) throw err
      }
      if (res !== undefined) expectRefusedOrEvaluated(res, sent, '1 MiB of request headers')
      await expectAlive(ctx, '1 MiB of request headers')
    },
  }),
]
