// spec 02, HttpReceipt, "Receipt signing order" and the two request hashes: every receipt is verified
// offline, from what was sent and the receipt alone (never by asking the sidecar).
import { callerIdentityHash, sha256Hex, type CallerIdentity } from '@gate/sdk'
import { defineCheck, fail } from '../check.js'
import type { Evaluation } from '../context.js'
import { buildRequest, callersOfEveryKind } from '../gate-request.js'
import { expectedCallerHash, expectedContentHash, recomputeReceiptId, signatureProblem } from '../receipt-math.js'

function label(e: Evaluation): string {
  return `${e.sent.method} ${e.sent.path}`
}

const HEX64 = /^[0-9a-f]{64}$/

export const RECEIPT_CHECKS = [
  defineCheck({
    id: 'receipt.id-recomputed',
    description: 'receipt id = SHA-256 of the RFC 8785 canonical receipt without id and signature (recomputed offline)',
    specRef: '02 HttpReceipt (id); Receipt signing order (2)',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        const id = recomputeReceiptId(e.answer.receipt as unknown as Record<string, unknown>)
        if (id !== e.answer.receipt.id) fail(`${label(e)}: receipt id ${e.answer.receipt.id}, recomputed ${id}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.signature-valid',
    description: 'the receipt signature verifies over the canonical receipt (all fields but signature) with the embedded kernel_key',
    specRef: '02 HttpReceipt (kernel_key, signature); Receipt signing order (4); Versioning',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        const problem = signatureProblem(e.answer.receipt as unknown as Record<string, unknown>)
        if (problem !== undefined) fail(`${label(e)}: ${problem}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.authority-semantics',
    description: 'receipts are mediated_decision / prevent / mediated with no observation_outcome, tool_origin caller_executed, redaction_mode none',
    specRef: '02 HttpReceipt; Receipt signing order (3); 01 Proxy receipt field sources',
    required: true,
    async run(ctx) {
      const expected: Record<string, string> = { receipt_kind: 'mediated_decision', boundary_class: 'prevent', trust_level: 'mediated', tool_origin: 'caller_executed', redaction_mode: 'none' }
      for (const e of (await ctx.samples()).all) {
        const r = e.answer.receipt as unknown as Record<string, unknown>
        for (const [field, value] of Object.entries(expected)) if (r[field] !== value) fail(`${label(e)}: ${field} is ${JSON.stringify(r[field])}, expected "${value}"`)
        if ('observation_outcome' in r) fail(`${label(e)}: observation_outcome is present (${JSON.stringify(r.observation_outcome)}); it must not be`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.content-hash',
    description: "content_hash = SHA-256 of canonical {body_hash, method, path, query (sorted), route_pattern}, recomputed from what was sent with the receipt's route_pattern",
    specRef: '02 GateHttpRequest (Content hash); HttpReceipt (content_hash)',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      // absent query and body_hash, and their explicit empty forms, hash alike: {} and null
      const bare = await ctx.evaluate(buildRequest({ method: 'GET', path }))
      const explicit = await ctx.evaluate({ ...buildRequest({ method: 'GET', path }), query: {}, body_hash: null, body_length: 0 })
      for (const e of [...(await ctx.samples()).all, bare, explicit]) {
        const r = e.answer.receipt
        if (!HEX64.test(r.content_hash)) fail(`${label(e)}: content_hash ${JSON.stringify(r.content_hash)} is not 64 lowercase hex`)
        const expected = expectedContentHash(e.sent, r.route_pattern)
        if (r.content_hash !== expected) fail(`${label(e)} (query ${JSON.stringify(e.sent.query ?? {})}, body_hash ${e.sent.body_hash ?? null}): content_hash ${r.content_hash}, recomputed ${expected}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.content-hash-drops-capability',
    description: 'a gate_capability query parameter is a credential, not content: content_hash is computed over the query without it',
    specRef: 'Gate: docs/kernel.md (hashes); 01 Forwarding rules (gate_capability removed upstream)',
    required: false,
    async run(ctx) {
      const path = ctx.unmatched()
      const e = await ctx.evaluate(buildRequest({ method: 'GET', path, query: { page: '1', gate_capability: 'not-a-token' } }))
      const expected = expectedContentHash(e.sent, e.answer.receipt.route_pattern, { dropCapability: true })
      if (e.answer.receipt.content_hash !== expected) {
        const kept = expectedContentHash(e.sent, e.answer.receipt.route_pattern)
        fail(`GET ${path}?page=1&gate_capability=…: content_hash ${e.answer.receipt.content_hash}; without gate_capability it would be ${expected}${e.answer.receipt.content_hash === kept ? ' (the sidecar hashed the token into the content)' : ''}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.caller-identity-hash',
    description: 'caller_identity_hash = SHA-256 of the canonical CallerIdentity sent, for every AuthMethod (bearer, api_key, cookie, mtls_certificate, anonymous)',
    specRef: '02 CallerIdentity (Identity hash); AuthMethod',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      for (const caller of callersOfEveryKind()) {
        const e = await ctx.evaluate(buildRequest({ method: 'GET', path, caller }))
        const expected = expectedCallerHash(e.sent)
        if (e.answer.receipt.caller_identity_hash !== expected) fail(`caller ${JSON.stringify(caller)}: caller_identity_hash ${e.answer.receipt.caller_identity_hash}, recomputed ${expected}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.caller-hash-defaults',
    description: 'the same identity written with and without its defaults (verified false, tenant null, agent_id null) yields the same caller_identity_hash',
    specRef: '02 CallerIdentity ("the same identity always yields the same hash"; field defaults)',
    required: true,
    async run(ctx) {
      const path = ctx.unmatched()
      const token = sha256Hex(`conformance-defaults-${ctx.unique()}`)
      const full: CallerIdentity = { subject: `bearer:${token.slice(0, 16)}`, auth_method: { method: 'bearer', token_hash: token }, verified: false, tenant: null, agent_id: null }
      const bare: CallerIdentity = { subject: full.subject, auth_method: full.auth_method }
      const a = await ctx.evaluate(buildRequest({ method: 'GET', path, caller: full }))
      const b = await ctx.evaluate(buildRequest({ method: 'GET', path, caller: bare }))
      if (a.answer.receipt.caller_identity_hash !== b.answer.receipt.caller_identity_hash) {
        fail(`caller with defaults written hashed to ${a.answer.receipt.caller_identity_hash}, the same caller without them to ${b.answer.receipt.caller_identity_hash}`)
      }
      const expected = callerIdentityHash(full)
      if (b.answer.receipt.caller_identity_hash !== expected) fail(`caller_identity_hash ${b.answer.receipt.caller_identity_hash}, recomputed ${expected}`)
    },
  }),
  defineCheck({
    id: 'receipt.request-binding',
    description: 'the receipt carries the request_id, method and session_id that were sent, and capability_id null when none was presented',
    specRef: '02 HttpReceipt (request_id, method, session_id, capability_id)',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        const r = e.answer.receipt
        if (r.request_id !== e.sent.request_id) fail(`${label(e)}: receipt request_id ${r.request_id}, sent ${e.sent.request_id}`)
        if (r.method !== e.sent.method) fail(`${label(e)}: receipt method ${r.method}, sent ${e.sent.method}`)
        if ((r.session_id ?? null) !== (e.sent.session_id ?? null)) fail(`${label(e)}: receipt session_id ${JSON.stringify(r.session_id ?? null)}, sent ${JSON.stringify(e.sent.session_id ?? null)}`)
        if ((r.capability_id ?? null) !== null) fail(`${label(e)}: receipt capability_id ${JSON.stringify(r.capability_id)} although no capability was presented`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.response-status',
    description: "response_status is the deny's http_status (403 when absent) for a deny and a 2xx status for an allow",
    specRef: '02 HttpReceipt (response_status: status associated with the outcome at signing time); Verdict',
    required: true,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        const v = e.answer.receipt.verdict
        const status = e.answer.receipt.response_status
        if (v.verdict === 'deny') {
          const expected = v.http_status ?? 403
          if (status !== expected) fail(`${label(e)}: deny receipt response_status ${status}, expected ${expected}`)
        } else if (v.verdict === 'allow' && !(Number.isInteger(status) && status >= 200 && status < 300)) {
          fail(`${label(e)}: allow receipt response_status ${status}, expected 2xx`)
        }
      }
    },
  }),
  defineCheck({
    id: 'receipt.policy-hash',
    description: 'policy_hash is the SHA-256 of the OpenAPI document bytes the sidecar loaded (start it with exactly the --spec file)',
    specRef: 'Gate: docs/kernel.md (policy_hash); 01 Proxy receipt field sources',
    required: false,
    async run(ctx) {
      const expected = sha256Hex(ctx.policy.bytes)
      for (const e of (await ctx.samples()).all) {
        if (e.answer.receipt.policy_hash !== expected) fail(`${label(e)}: policy_hash ${e.answer.receipt.policy_hash}, SHA-256 of ${ctx.policy.source} is ${expected}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.timestamp-current',
    description: 'the receipt timestamp is the signing time in Unix seconds (within 5 minutes of this machine\'s clock)',
    specRef: '02 HttpReceipt (timestamp)',
    required: false,
    async run(ctx) {
      const now = Math.floor(Date.now() / 1000)
      for (const e of (await ctx.samples()).all) {
        const t = e.answer.receipt.timestamp
        if (!Number.isInteger(t) || Math.abs(t - now) > 300) fail(`${label(e)}: receipt timestamp ${t}, local clock ${now}`)
      }
    },
  }),
  defineCheck({
    id: 'receipt.decision-metadata',
    description: 'decision receipts carry metadata.gate_http_status_scope = "decision"',
    specRef: 'Gate: docs/receipts.md; 01 Proxy receipt field sources (metadata)',
    required: false,
    async run(ctx) {
      for (const e of (await ctx.samples()).all) {
        const scope = (e.answer.receipt.metadata as Record<string, unknown> | null | undefined)?.gate_http_status_scope
        if (scope !== 'decision') fail(`${label(e)}: metadata.gate_http_status_scope is ${JSON.stringify(scope ?? null)}`)
      }
    },
  }),
]
