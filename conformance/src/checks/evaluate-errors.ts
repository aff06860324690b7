// spec 02, Errors: /gate/evaluate answers 400 gate_bad_request for a body that is unreadable or not a
// GateHttpRequest, a duplicate query key, and a blank or malformed x-gate-execution-nonce header.
import { defineCheck } from '../check.js'
import { expectEvaluateAnswer, type CheckContext } from '../context.js'
import { expectBadRequest } from '../expect.js'
import { buildRequest } from '../gate-request.js'

function validBody(ctx: CheckContext): Record<string, unknown> {
  return buildRequest({ method: 'GET', path: ctx.unmatched() }) as unknown as Record<string, unknown>
}

/** The control: the same body without the fault is evaluated (so a 400 below is caused by the fault). */
async function expectBaselineEvaluated(ctx: CheckContext, body: unknown, what: string): Promise<void> {
  expectEvaluateAnswer(await ctx.evaluateRaw(body), `${what} (control request without the fault)`)
}

/** Sends each case and expects 400 gate_bad_request for every one. */
async function expectAllBadRequest(ctx: CheckContext, cases: [string, unknown][]): Promise<void> {
  for (const [what, body] of cases) expectBadRequest(await ctx.evaluateRaw(body), what)
}

export const EVALUATE_ERROR_CHECKS = [
  defineCheck({
    id: 'evaluate.bad-json-400',
    description: 'a body that is not valid JSON answers 400 gate_bad_request with the structured error body',
    specRef: '02 Errors (gate_bad_request: body not decodable)',
    required: true,
    async run(ctx) {
      await expectAllBadRequest(ctx, [
        ['truncated JSON', '{"request_id":"x","method":'],
        ['trailing garbage', JSON.stringify(validBody(ctx)) + ' x'],
        ['single quotes', "{'request_id':'x'}"],
        ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
      ])
    },
  }),
  defineCheck({
    id: 'evaluate.not-object-400',
    description: 'an empty body or a JSON value that is not an object (array, string, number, null) answers 400 gate_bad_request',
    specRef: '02 Errors (gate_bad_request: body not decodable)',
    required: true,
    async run(ctx) {
      await expectAllBadRequest(ctx, [
        ['empty body', ''],
        ['array', '[]'],
        ['string', '"GET /pets"'],
        ['number', '42'],
        ['null', 'null'],
      ])
    },
  }),
  defineCheck({
    id: 'evaluate.missing-field-400',
    description: 'a GateHttpRequest missing any required field (request_id, method, route_pattern, path, caller, timestamp) answers 400',
    specRef: '02 GateHttpRequest; Errors',
    required: true,
    async run(ctx) {
      const cases: [string, unknown][] = []
      for (const field of ['request_id', 'method', 'route_pattern', 'path', 'caller', 'timestamp']) {
        const body = validBody(ctx)
        delete body[field]
        cases.push([`without ${field}`, body])
      }
      await expectAllBadRequest(ctx, cases)
    },
  }),
  defineCheck({
    id: 'evaluate.wrong-type-400',
    description: 'fields of the wrong JSON type (timestamp as text, query value as number, path as number, body_length negative…) answer 400',
    specRef: '02 GateHttpRequest; Errors',
    required: true,
    async run(ctx) {
      const variants: [string, Record<string, unknown>][] = [
        ['timestamp as a string', { timestamp: '1700000000' }],
        ['timestamp as a fraction', { timestamp: 1.5 }],
        ['path as a number', { path: 42 }],
        ['request_id as an object', { request_id: { id: 'x' } }],
        ['query as an array', { query: ['a', 'b'] }],
        ['query value as a number', { query: { a: 1 } }],
        ['headers value as an array', { headers: { accept: ['a', 'b'] } }],
        ['body_length negative', { body_length: -1 }],
        ['body_hash not a hash', { body_hash: 'not-a-sha256' }],
        ['session_id as a number', { session_id: 7 }],
      ]
      await expectBaselineEvaluated(ctx, validBody(ctx), 'a valid GateHttpRequest')
      await expectAllBadRequest(ctx, variants.map(([what, patch]) => [what, { ...validBody(ctx), ...patch }]))
    },
  }),
  defineCheck({
    id: 'evaluate.unknown-method-400',
    description: 'a method outside GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE (or not uppercase) answers 400',
    specRef: '02 HttpMethod (uppercase strings); Errors',
    required: true,
    async run(ctx) {
      const cases: [string, unknown][] = ['TRACE', 'CONNECT', 'PROPFIND', 'get', 'Post', '', 'GET '].map(m => [`method "${m}"`, { ...validBody(ctx), method: m }])
      await expectAllBadRequest(ctx, cases)
    },
  }),
  defineCheck({
    id: 'evaluate.bad-caller-400',
    description: 'a caller that is not a CallerIdentity (no subject, unknown auth_method tag, a raw token instead of its hash) answers 400',
    specRef: '02 CallerIdentity; AuthMethod; Errors',
    required: true,
    async run(ctx) {
      const callers: [string, unknown][] = [
        ['caller as a string', 'anonymous'],
        ['caller without subject', { auth_method: { method: 'anonymous' } }],
        ['caller without auth_method', { subject: 'anonymous' }],
        ['unknown auth_method tag', { subject: 'x', auth_method: { method: 'password', password: 'hunter2' } }],
        ['bearer without token_hash', { subject: 'x', auth_method: { method: 'bearer' } }],
        ['bearer with a raw token', { subject: 'x', auth_method: { method: 'bearer', token_hash: 'Bearer abc.def.ghi' } }],
        ['verified as a string', { subject: 'anonymous', auth_method: { method: 'anonymous' }, verified: 'yes' }],
      ]
      await expectAllBadRequest(ctx, callers.map(([what, caller]) => [what, { ...validBody(ctx), caller }]))
    },
  }),
  defineCheck({
    id: 'evaluate.duplicate-query-key-400',
    description: 'a query object naming the same key twice ({"a":"1","a":"2"}) answers 400 gate_bad_request',
    specRef: '02 Errors (duplicate query key); 01 Limits',
    required: true,
    async run(ctx) {
      const body = JSON.stringify({ ...validBody(ctx), query: { a: '1', b: '2' } })
      await expectBaselineEvaluated(ctx, body, 'query {"a":"1","b":"2"}')
      const duplicated = body.replace('"query":{"a":"1","b":"2"}', '"query":{"a":"1","b":"2","a":"3"}')
      expectBadRequest(await ctx.evaluateRaw(duplicated), 'query {"a":"1","b":"2","a":"3"}')
      const adjacent = body.replace('"query":{"a":"1","b":"2"}', '"query":{"b":"2","b":"2"}')
      expectBadRequest(await ctx.evaluateRaw(adjacent), 'query {"b":"2","b":"2"} (same value twice)')
    },
  }),
  defineCheck({
    id: 'evaluate.nonce-blank-400',
    description: 'a blank X-Gate-Execution-Nonce header (empty or only spaces) answers 400 gate_bad_request',
    specRef: '02 Errors (blank x-gate-execution-nonce)',
    required: true,
    async run(ctx) {
      const body = validBody(ctx)
      await expectBaselineEvaluated(ctx, body, 'no X-Gate-Execution-Nonce header')
      for (const value of ['', '   ']) {
        expectBadRequest(await ctx.evaluateRaw(body, { nonce: value }), `X-Gate-Execution-Nonce "${value}"`)
      }
    },
  }),
  defineCheck({
    id: 'evaluate.nonce-malformed-400',
    description: 'an X-Gate-Execution-Nonce header that is not 32 hex characters answers 400 gate_bad_request',
    specRef: '02 Errors (malformed x-gate-execution-nonce)',
    required: true,
    async run(ctx) {
      const hex32 = '0123456789abcdef0123456789abcdef'
      await expectBaselineEvaluated(ctx, validBody(ctx), 'no X-Gate-Execution-Nonce header')
      for (const value of ['zz', hex32.slice(1), `${hex32}0`, 'g'.repeat(32), `${hex32},${hex32}`, `nonce ${hex32}`]) {
        expectBadRequest(await ctx.evaluateRaw(validBody(ctx), { nonce: value }), `X-Gate-Execution-Nonce "${value}"`)
      }
    },
  }),
]
