// spec 02, POST /gate/verify and VerifyReceiptResponse: every flag, on genuine receipts of this sidecar
// and on receipts tampered or re-signed by the suite (with a key the sidecar does not trust).
import { createSigner, generateSecret, type HttpReceipt, type VerifyReceiptResponse } from '@gate/sdk'
import { defineCheck, fail } from '../check.js'
import type { CheckContext } from '../context.js'
import { expectBadRequest, expectJsonContentType, expectSchema, expectStatus } from '../expect.js'
import { flipSignature, recomputeReceiptId, signReceiptUnchecked } from '../receipt-math.js'

/** POST /gate/verify; fails unless 200 with an object. */
async function verify(ctx: CheckContext, receipt: unknown, what: string): Promise<VerifyReceiptResponse> {
  const res = await ctx.verifyRaw(receipt)
  expectStatus(res, 200, `POST /gate/verify (${what})`)
  if (typeof res.json !== 'object' || res.json === null) fail(`POST /gate/verify (${what}): the answer is not a JSON object`)
  return res.json as VerifyReceiptResponse
}

/** Every listed flag has the listed value. */
function expectFlags(v: VerifyReceiptResponse, expected: Partial<Record<keyof VerifyReceiptResponse, unknown>>, what: string): void {
  const wrong = Object.entries(expected)
    .filter(([k, value]) => (v as unknown as Record<string, unknown>)[k] !== value)
    .map(([k, value]) => `${k} ${JSON.stringify((v as unknown as Record<string, unknown>)[k])} (expected ${JSON.stringify(value)})`)
  if (wrong.length > 0) fail(`POST /gate/verify (${what}): ${wrong.join(', ')}`)
}

/** The genuine deny receipt with its verdict flipped to allow (the forgery that matters). */
function flippedToAllow(receipt: HttpReceipt): HttpReceipt {
  return { ...receipt, verdict: { verdict: 'allow' }, response_status: 200 }
}

/** The genuine allow receipt's body re-signed by the suite's untrusted key with `patch` applied. */
function foreign(ctx: CheckContext, receipt: HttpReceipt, patch: Record<string, unknown> = {}): HttpReceipt {
  return signReceiptUnchecked({ ...(receipt as unknown as Record<string, unknown>), ...patch }, ctx.untrustedSigner)
}

export const VERIFY_CHECKS = [
  defineCheck({
    id: 'verify.genuine-allow',
    description: "a genuine allow receipt verifies: every validity flag true, ok and authorized true, result allow, signer_key_hex = kernel_key",
    specRef: '02 VerifyReceiptResponse; Endpoints (POST /gate/verify)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      const v = await verify(ctx, r, 'genuine allow receipt')
      expectFlags(v, {
        signature_valid: true, signer_trusted: true, receipt_id_valid: true, parameter_hash_valid: true, ok: true, authorized: true,
        result: 'allow', receipt_kind: r.receipt_kind, boundary_class: r.boundary_class, trust_level: r.trust_level, signer_key_hex: r.kernel_key,
      }, 'genuine allow receipt')
    },
  }),
  defineCheck({
    id: 'verify.genuine-deny',
    description: 'a genuine deny receipt verifies (ok true) but is not authorized: result deny, authorized false',
    specRef: '02 VerifyReceiptResponse (authorized: ok and the verdict is allow)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).deny.answer.receipt
      const v = await verify(ctx, r, 'genuine deny receipt')
      expectFlags(v, { signature_valid: true, signer_trusted: true, receipt_id_valid: true, parameter_hash_valid: true, ok: true, authorized: false, result: 'deny' }, 'genuine deny receipt')
    },
  }),
  defineCheck({
    id: 'verify.tampered-field',
    description: 'a genuine deny receipt with its verdict flipped to allow (id left as is): receipt_id_valid, signature_valid, ok and authorized all false',
    specRef: '02 VerifyReceiptResponse; Receipt signing order (verification)',
    required: true,
    async run(ctx) {
      const v = await verify(ctx, flippedToAllow((await ctx.samples()).deny.answer.receipt), 'deny receipt flipped to allow')
      expectFlags(v, { receipt_id_valid: false, signature_valid: false, ok: false, authorized: false }, 'deny receipt flipped to allow')
    },
  }),
  defineCheck({
    id: 'verify.tampered-id-recomputed',
    description: 'the same forgery with the id recomputed: receipt_id_valid true but signature_valid, ok and authorized false',
    specRef: '02 VerifyReceiptResponse (signature_valid); Receipt signing order (verification)',
    required: true,
    async run(ctx) {
      const forged = flippedToAllow((await ctx.samples()).deny.answer.receipt)
      forged.id = recomputeReceiptId(forged as unknown as Record<string, unknown>)
      const v = await verify(ctx, forged, 'flipped receipt with a recomputed id')
      expectFlags(v, { receipt_id_valid: true, signature_valid: false, ok: false, authorized: false }, 'flipped receipt with a recomputed id')
    },
  }),
  defineCheck({
    id: 'verify.bad-signature',
    description: 'a genuine allow receipt with one signature nibble changed: receipt_id_valid true, signature_valid, ok and authorized false',
    specRef: '02 VerifyReceiptResponse (signature_valid)',
    required: true,
    async run(ctx) {
      const v = await verify(ctx, flipSignature((await ctx.samples()).allow.answer.receipt), 'allow receipt with a changed signature')
      expectFlags(v, { receipt_id_valid: true, signature_valid: false, ok: false, authorized: false }, 'allow receipt with a changed signature')
    },
  }),
  defineCheck({
    id: 'verify.foreign-signer',
    description: 'an allow receipt validly re-signed by another key: signature_valid true, signer_trusted, ok and authorized false, signer_key_hex = that key',
    specRef: '02 VerifyReceiptResponse (signer_trusted: the sidecar\'s own signer only)',
    required: true,
    async run(ctx) {
      const r = foreign(ctx, (await ctx.samples()).allow.answer.receipt)
      const v = await verify(ctx, r, 'allow receipt signed by a foreign key')
      expectFlags(v, { signature_valid: true, receipt_id_valid: true, signer_trusted: false, ok: false, authorized: false, signer_key_hex: ctx.untrustedSigner.publicKey }, 'allow receipt signed by a foreign key')
    },
  }),
  defineCheck({
    id: 'verify.ecdsa-signatures',
    description: 'receipts signed with P-256 and P-384 keys (p256:/p384: prefixes) verify: signature_valid true, signer_trusted false, signer_key_hex = that key',
    specRef: '02 Versioning (kernel_key and signature are algorithm-aware; verification dispatches on the prefix)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      for (const algorithm of ['p256', 'p384'] as const) {
        const signer = createSigner({ algorithm, secret: generateSecret(algorithm) })
        const signed = signReceiptUnchecked(r as unknown as Record<string, unknown>, signer)
        const v = await verify(ctx, signed, `${algorithm} signature`)
        expectFlags(v, { signature_valid: true, receipt_id_valid: true, signer_trusted: false, ok: false, signer_key_hex: signer.publicKey }, `receipt signed with a ${algorithm} key`)
      }
    },
  }),
  defineCheck({
    id: 'verify.malformed-content-hash',
    description: 'a signed receipt whose content_hash is not 64 lowercase hex (uppercase, 63 chars): parameter_hash_valid and ok false',
    specRef: '02 VerifyReceiptResponse (parameter_hash_valid); Limits (content_hash)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      for (const [what, hash] of [['uppercase', r.content_hash.toUpperCase()], ['63 characters', r.content_hash.slice(1)]] as const) {
        const v = await verify(ctx, foreign(ctx, r, { content_hash: hash }), `content_hash ${what}`)
        expectFlags(v, { parameter_hash_valid: false, ok: false, authorized: false, signature_valid: true }, `receipt with content_hash ${what}`)
      }
    },
  }),
  defineCheck({
    id: 'verify.authority-semantics',
    description: 'a validly signed receipt breaking the authority semantics (kind, boundary, observation_outcome, trust level) reports signature_valid false and echoes the values',
    specRef: '02 VerifyReceiptResponse (signature_valid: "authority semantics hold"); Receipt signing order',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      const patches: [string, Record<string, unknown>][] = [
        ['receipt_kind trace_observation', { receipt_kind: 'trace_observation' }],
        ['boundary_class detect_only', { boundary_class: 'detect_only' }],
        ['observation_outcome present', { observation_outcome: 'observed' }],
        ['trust_level advisory', { trust_level: 'advisory' }],
      ]
      for (const [what, patch] of patches) {
        const v = await verify(ctx, foreign(ctx, r, patch), what)
        const echo: Record<string, unknown> = {}
        for (const k of ['receipt_kind', 'boundary_class', 'trust_level']) if (k in patch) echo[k] = patch[k]
        expectFlags(v, { signature_valid: false, ok: false, authorized: false, ...echo }, what)
      }
    },
  }),
  defineCheck({
    id: 'verify.timestamp-ignored',
    description: 'a validly signed receipt with a timestamp long past (or far ahead) still reports signature_valid and receipt_id_valid true',
    specRef: '02 VerifyReceiptResponse ("No field reads timestamp")',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      for (const timestamp of [1, 4102444800]) {
        const v = await verify(ctx, foreign(ctx, r, { timestamp }), `timestamp ${timestamp}`)
        expectFlags(v, { signature_valid: true, receipt_id_valid: true }, `receipt with timestamp ${timestamp}`)
      }
    },
  }),
  defineCheck({
    id: 'verify.result-mapping',
    description: 'result is allow, deny, cancelled or incomplete for the verdicts allow, deny, cancel and incomplete',
    specRef: '02 VerifyReceiptResponse (result)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      const cases: [Record<string, unknown>, string][] = [
        [{ verdict: 'allow' }, 'allow'],
        [{ verdict: 'deny', reason: 'no', guard: 'CapabilityGuard', http_status: 403 }, 'deny'],
        [{ verdict: 'cancel', reason: 'timeout' }, 'cancelled'],
        [{ verdict: 'incomplete', reason: 'nonce required' }, 'incomplete'],
      ]
      for (const [verdict, result] of cases) {
        const v = await verify(ctx, foreign(ctx, r, { verdict }), `verdict ${String(verdict.verdict)}`)
        expectFlags(v, { result, authorized: false }, `receipt with verdict ${String(verdict.verdict)}`)
      }
    },
  }),
  defineCheck({
    id: 'verify.unknown-verdict-tag',
    description: 'a signed receipt whose verdict tag is none of allow, deny, cancel, incomplete answers 400, or a schema-valid 200 with ok and authorized false',
    specRef: '02 Verdict; VerifyReceiptResponse (result: allow, deny, cancelled or incomplete); Errors (verify body not an HttpReceipt)',
    required: true,
    async run(ctx) {
      const r = (await ctx.samples()).allow.answer.receipt
      for (const tag of ['maybe', 'ALLOW', 'cancelled']) {
        const what = `POST /gate/verify (receipt with verdict tag "${tag}")`
        const res = await ctx.verifyRaw(foreign(ctx, r, { verdict: { verdict: tag } }))
        if (res.status === 400) {
          expectBadRequest(res, what)
          continue
        }
        expectStatus(res, 200, what)
        expectSchema('gate.http.verify_response.v1', res.json, what)
        expectFlags(res.json as VerifyReceiptResponse, { ok: false, authorized: false }, `receipt with verdict tag "${tag}"`)
      }
    },
  }),
  defineCheck({
    id: 'verify.not-a-receipt-400',
    description: 'a body that is not an HttpReceipt (bad JSON, empty, array, string, null, {}, an object without the receipt fields) answers 400 gate_bad_request',
    specRef: '02 Errors (gate_bad_request: verify body not an HttpReceipt)',
    required: true,
    async run(ctx) {
      const cases: [string, string][] = [
        ['bad JSON', '{"id":'],
        ['empty body', ''],
        ['array', '[]'],
        ['string', '"receipt"'],
        ['null', 'null'],
        ['empty object', '{}'],
        ['only an id', '{"id":"00"}'],
      ]
      for (const [what, body] of cases) expectBadRequest(await ctx.verifyRaw(body), `POST /gate/verify with ${what}`)
    },
  }),
  defineCheck({
    id: 'verify.response-schema',
    description: 'every 200 answer of /gate/verify (genuine, tampered, foreign-signed) validates against gate.http.verify_response.v1',
    specRef: '02 VerifyReceiptResponse; Versioning (schemas/v1)',
    required: true,
    async run(ctx) {
      const { allow, deny } = await ctx.samples()
      const receipts: [string, unknown][] = [
        ['genuine allow', allow.answer.receipt],
        ['genuine deny', deny.answer.receipt],
        ['tampered', flippedToAllow(deny.answer.receipt)],
        ['foreign-signed', foreign(ctx, allow.answer.receipt)],
      ]
      for (const [what, receipt] of receipts) {
        const res = await ctx.verifyRaw(receipt)
        expectStatus(res, 200, `POST /gate/verify (${what})`)
        expectJsonContentType(res, `POST /gate/verify (${what})`)
        expectSchema('gate.http.verify_response.v1', res.json, `POST /gate/verify (${what})`)
      }
    },
  }),
]
