// spec 02, Limits and Endpoints: /gate/evaluate reads at most 10 MiB and /gate/verify at most 1 MiB.
// A body of exactly the limit is evaluated; one byte more answers 400 gate_bad_request, whether the
// size is declared in Content-Length or only discovered while reading a chunked body.
import { defineCheck, fail } from '../check.js'
import type { CheckContext } from '../context.js'
import { expectEvaluateAnswer } from '../context.js'
import { expectBadRequest, expectStatus } from '../expect.js'
import { buildRequest } from '../gate-request.js'

const EVALUATE_LIMIT_BYTES = 10 * 1024 * 1024
const VERIFY_LIMIT_BYTES = 1024 * 1024
const LIMIT_TIMEOUT_MS = 20_000

/** `json` followed by spaces (still one valid JSON text) up to exactly `size` bytes. */
function padTo(json: string, size: number): Buffer {
  const head = Buffer.from(json, 'utf8')
  if (head.length > size) throw new Error(`cannot pad ${head.length} bytes down to ${size}`)
  const out = Buffer.alloc(size, 0x20)
  head.copy(out)
  return out
}

/** The bytes as a chunked body (no Content-Length): the receiver learns the size only by reading. */
async function* chunked(bytes: Buffer): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += 256 * 1024) yield bytes.subarray(i, i + 256 * 1024)
}

function evaluateBody(ctx: CheckContext, size: number): Buffer {
  return padTo(JSON.stringify(buildRequest({ method: 'GET', path: ctx.unmatched() })), size)
}

async function verifyBody(ctx: CheckContext, size: number): Promise<Buffer> {
  return padTo(JSON.stringify((await ctx.samples()).allow.answer.receipt), size)
}

export const LIMIT_CHECKS = [
  defineCheck({
    id: 'limits.evaluate-10mib',
    description: 'a valid GateHttpRequest of exactly 10 MiB (padded with JSON whitespace) is evaluated: 200 with a verdict and a receipt',
    specRef: '02 Limits (evaluate request body at most 10 MiB); Endpoints',
    required: true,
    async run(ctx) {
      const res = await ctx.evaluateRaw(evaluateBody(ctx, EVALUATE_LIMIT_BYTES), {}, LIMIT_TIMEOUT_MS)
      expectEvaluateAnswer(res, 'a 10 MiB evaluate body')
    },
  }),
  defineCheck({
    id: 'limits.evaluate-10mib-plus-1',
    description: 'an evaluate body of 10 MiB + 1 byte (Content-Length declared) answers 400 gate_bad_request',
    specRef: '02 Limits; 01 Limits (over the limit answers 400)',
    required: true,
    async run(ctx) {
      expectBadRequest(await ctx.evaluateRaw(evaluateBody(ctx, EVALUATE_LIMIT_BYTES + 1), {}, LIMIT_TIMEOUT_MS), 'a 10 MiB + 1 evaluate body')
    },
  }),
  defineCheck({
    id: 'limits.evaluate-chunked-over-limit',
    description: 'an evaluate body of 10 MiB + 1 byte sent chunked (no Content-Length) answers 400 gate_bad_request',
    specRef: '02 Limits; 01 Limits',
    required: true,
    async run(ctx) {
      expectBadRequest(await ctx.evaluateRaw(chunked(evaluateBody(ctx, EVALUATE_LIMIT_BYTES + 1)), {}, LIMIT_TIMEOUT_MS), 'a chunked 10 MiB + 1 evaluate body')
    },
  }),
  defineCheck({
    id: 'limits.verify-1mib',
    description: 'a genuine receipt padded to exactly 1 MiB is verified: 200 with ok true',
    specRef: '02 Limits (verify request body at most 1 MiB); Endpoints',
    required: true,
    async run(ctx) {
      const res = await ctx.verifyRaw(await verifyBody(ctx, VERIFY_LIMIT_BYTES), LIMIT_TIMEOUT_MS)
      expectStatus(res, 200, 'a 1 MiB verify body')
      if ((res.json as { ok?: unknown } | undefined)?.ok !== true) fail(`a 1 MiB verify body: expected ok true, got ${res.text.slice(0, 200)}`)
    },
  }),
  defineCheck({
    id: 'limits.verify-1mib-plus-1',
    description: 'a verify body of 1 MiB + 1 byte (Content-Length declared) answers 400 gate_bad_request',
    specRef: '02 Limits',
    required: true,
    async run(ctx) {
      expectBadRequest(await ctx.verifyRaw(await verifyBody(ctx, VERIFY_LIMIT_BYTES + 1), LIMIT_TIMEOUT_MS), 'a 1 MiB + 1 verify body')
    },
  }),
  defineCheck({
    id: 'limits.verify-chunked-over-limit',
    description: 'a verify body of 1 MiB + 1 byte sent chunked (no Content-Length) answers 400 gate_bad_request',
    specRef: '02 Limits',
    required: true,
    async run(ctx) {
      expectBadRequest(await ctx.verifyRaw(chunked(await verifyBody(ctx, VERIFY_LIMIT_BYTES + 1)), LIMIT_TIMEOUT_MS), 'a chunked 1 MiB + 1 verify body')
    },
  }),
]
