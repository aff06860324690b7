// spec 02, Verdict (`incomplete`: a strict nonce preflight answers with it plus an `execution_nonce`),
// EvaluateResponse (`execution_nonce`: the client re-presents it as the request's `execution_nonce`)
// and schemas/v1 gate.execution_nonce.v1 (single-use, expiring, bound, signed over its canonical JSON).
// These checks need a sidecar started with strict execution nonces (`gate sidecar --strict-nonces`) and
// a run with --strict-nonces; every other check expects a sidecar without them. The expiry check also
// needs short-lived nonces (`--nonce-ttl-secs 2`), else it is skipped.
import { setTimeout as delay } from 'node:timers/promises'
import { canonicalJson, utf8, verifySignature, type SignedExecutionNonce } from '@gate/sdk'
import { defineCheck, fail, skip } from '../check.js'
import type { CheckContext, Evaluation } from '../context.js'
import { encodeToken, grantFor } from '../capability-tokens.js'
import { describeVerdict, expectAllow, expectDeny, expectSchema } from '../expect.js'
import { tokenTarget } from './capabilities.js'

const NEEDS = ['control-token', 'strict-nonces'] as const

/** Longest the expiry check waits for a nonce to expire; a sidecar with longer-lived nonces skips it. */
const MAX_EXPIRY_WAIT_MS = 10_000
/** Waited past the first whole second after expires_at, for timer and clock granularity. */
const EXPIRY_MARGIN_MS = 200

/** A deny-by-default request with a token the sidecar issued, and its preflight answer. */
async function preflight(ctx: CheckContext) {
  const target = tokenTarget(ctx)
  const capability = encodeToken(await ctx.issueToken([grantFor(target)]))
  const sent = target.request()
  const what = `${target.method} ${target.pattern} with a valid token and no nonce`
  const first = await ctx.evaluate(sent, { capability })
  const nonce = expectPreflight(first, what)
  return { target, capability, sent, what, first, nonce }
}

/** The answer is the strict preflight: verdict incomplete with an execution_nonce; returns the nonce. */
function expectPreflight(e: Evaluation, what: string): SignedExecutionNonce {
  if (e.answer.verdict.verdict !== 'incomplete') fail(`${what}: expected the strict preflight (verdict incomplete), got ${describeVerdict(e)}`)
  const nonce = e.answer.execution_nonce
  if (nonce === undefined) fail(`${what}: verdict incomplete without an execution_nonce (spec 02: the preflight answers with one)`)
  return nonce
}

/** The nonce's fields without its signature, re-signed or tampered by a check. */
function nonceBody(nonce: SignedExecutionNonce): Omit<SignedExecutionNonce, 'signature'> {
  const { signature: _signature, ...body } = nonce
  return body
}

export const NONCE_CHECKS = [
  defineCheck({
    id: 'nonces.preflight-incomplete',
    description:
      'strict nonces: a deny-by-default request with a valid token and no nonce answers verdict incomplete with an execution_nonce (schema-valid, signed by the receipt kernel_key, bound to the request) and a receipt with response_status 428',
    specRef: '02 Verdict (incomplete), EvaluateResponse (execution_nonce), States (incomplete → 428); schemas/v1 gate.execution_nonce.v1',
    required: true,
    needs: NEEDS,
    async run(ctx) {
      const { sent, what, first, nonce } = await preflight(ctx)
      expectSchema('gate.execution_nonce.v1', nonce, `${what}: execution_nonce`)
      const receipt = first.answer.receipt
      if (receipt.verdict.verdict !== 'incomplete') fail(`${what}: the receipt records ${receipt.verdict.verdict}, the answer incomplete`)
      if (receipt.response_status !== 428) fail(`${what}: receipt response_status ${receipt.response_status}, expected 428 (incomplete → 428)`)
      if (nonce.kernel_key !== receipt.kernel_key) fail(`${what}: the nonce's kernel_key ${nonce.kernel_key} is not the receipt's ${receipt.kernel_key}`)
      if (!verifySignature(nonce.kernel_key, utf8(canonicalJson(nonceBody(nonce))), nonce.signature)) {
        fail(`${what}: the nonce's signature does not verify over its canonical JSON with its kernel_key`)
      }
      const bound: [keyof SignedExecutionNonce, unknown][] = [
        ['request_id', sent.request_id],
        ['method', sent.method],
        ['route_pattern', receipt.route_pattern],
        ['content_hash', receipt.content_hash],
        ['caller_identity_hash', receipt.caller_identity_hash],
      ]
      for (const [field, expected] of bound) {
        if (nonce[field] !== expected) fail(`${what}: nonce ${field} is ${JSON.stringify(nonce[field])}, expected ${JSON.stringify(expected)}`)
      }
      if (!(nonce.expires_at > nonce.issued_at)) fail(`${what}: nonce expires_at ${nonce.expires_at} is not after issued_at ${nonce.issued_at}`)
    },
  }),
  defineCheck({
    id: 'nonces.retry-allowed',
    description: 'strict nonces: the same request retried with the issued nonce as its execution_nonce (and the token again) is allowed',
    specRef: '02 EvaluateResponse (execution_nonce: re-presented as the request\'s execution_nonce), GateHttpRequest (execution_nonce)',
    required: true,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      expectAllow(await ctx.evaluate({ ...sent, execution_nonce: nonce }, { capability }), `${target.method} ${target.pattern} retried with its execution_nonce`)
    },
  }),
  defineCheck({
    id: 'nonces.single-use',
    description: 'strict nonces: a nonce already used by an allowed retry is denied when presented again',
    specRef: 'schemas/v1 gate.execution_nonce.v1 (single-use)',
    required: true,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      const retry = { ...sent, execution_nonce: nonce }
      expectAllow(await ctx.evaluate(retry, { capability }), `${target.method} ${target.pattern} retried with its execution_nonce`)
      expectDeny(await ctx.evaluate(retry, { capability }), `${target.method} ${target.pattern} retried a second time with the same nonce`)
    },
  }),
  defineCheck({
    id: 'nonces.expired-denied',
    description:
      `strict nonces: a nonce presented after its expires_at is denied, and a fresh nonce issued then is still allowed (waits for the expiry, at most ${MAX_EXPIRY_WAIT_MS / 1000} s, so it needs short-lived nonces, e.g. --nonce-ttl-secs 2)`,
    specRef: 'schemas/v1 gate.execution_nonce.v1 (an expiring nonce; expires_at in unix seconds); docs/kernel.md (NonceGuard denies an expired nonce)',
    required: true,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      // the sidecar may count the nonce expired from expires_at on or only after it (whole seconds
      // either way): wait until its clock reads expires_at + 1, plus a margin
      const waitMs = (nonce.expires_at + 1) * 1000 + EXPIRY_MARGIN_MS - Date.now()
      if (waitMs > MAX_EXPIRY_WAIT_MS) {
        skip(
          `the sidecar's execution nonces live ${nonce.expires_at - nonce.issued_at} s, longer than this check waits (${MAX_EXPIRY_WAIT_MS / 1000} s): ` +
            'to run it, start the sidecar with a short nonce lifetime, e.g. `gate sidecar --strict-nonces --nonce-ttl-secs 2`',
        )
      }
      // here time passing is the behaviour under test, not a synchronisation
      if (waitMs > 0) await delay(waitMs)
      // one attempt, no polling: a wrongly allowed retry uses the nonce up, and the next try would be
      // denied as used, not as expired
      expectDeny(
        await ctx.evaluate({ ...sent, execution_nonce: nonce }, { capability }),
        `${target.method} ${target.pattern} retried with its execution_nonce after it expired (expires_at ${nonce.expires_at})`,
      )
      // a sidecar that merely denies everything after a while must not pass
      const fresh = await preflight(ctx)
      expectAllow(
        await ctx.evaluate({ ...fresh.sent, execution_nonce: fresh.nonce }, { capability: fresh.capability }),
        `${target.method} ${target.pattern} retried with a fresh execution_nonce issued after the first one expired`,
      )
    },
  }),
  defineCheck({
    id: 'nonces.forged-denied',
    description:
      'strict nonces: a nonce whose fields were changed after signing, or one re-signed by a key the sidecar does not trust, is denied (fail closed on a bad signature)',
    specRef: '02 GateHttpRequest (execution_nonce: a SignedExecutionNonce); schemas/v1 gate.execution_nonce.v1 (signature over canonical JSON)',
    required: true,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      const tampered: SignedExecutionNonce = { ...nonce, expires_at: nonce.expires_at + 86_400 }
      expectDeny(await ctx.evaluate({ ...sent, execution_nonce: tampered }, { capability }), `${target.method} ${target.pattern} with its nonce's expires_at moved a day later`)
      const body = { ...nonceBody(nonce), kernel_key: ctx.untrustedSigner.publicKey }
      const foreign: SignedExecutionNonce = { ...body, signature: ctx.untrustedSigner.sign(utf8(canonicalJson(body))) }
      expectDeny(await ctx.evaluate({ ...sent, execution_nonce: foreign }, { capability }), `${target.method} ${target.pattern} with its nonce re-signed by an untrusted key`)
    },
  }),
  defineCheck({
    id: 'nonces.bound-to-request',
    description: 'strict nonces: a nonce presented with a request of other content (another body) is denied, and stays usable for its own request',
    specRef: 'Gate design: schemas/v1 gate.execution_nonce.v1 (bound to caller, route and content hash)',
    required: false,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      const other = target.request({ body_hash: 'f'.repeat(64), body_length: 1 })
      expectDeny(await ctx.evaluate({ ...other, execution_nonce: nonce }, { capability }), `${target.method} ${target.pattern} with another body presenting the nonce`)
      expectAllow(await ctx.evaluate({ ...sent, execution_nonce: nonce }, { capability }), `${target.method} ${target.pattern} with the nonce's own request afterwards`)
    },
  }),
  defineCheck({
    id: 'nonces.header-retry-allowed',
    description: 'strict nonces: the retry may name the nonce by its id in X-Gate-Execution-Nonce instead of the body field',
    specRef: 'Gate design: docs/kernel.md (NonceGuard); 02 Errors (x-gate-execution-nonce)',
    required: false,
    needs: NEEDS,
    async run(ctx) {
      const { target, capability, sent, nonce } = await preflight(ctx)
      expectAllow(await ctx.evaluate(sent, { capability, nonce: nonce.nonce_id }), `${target.method} ${target.pattern} retried with X-Gate-Execution-Nonce ${nonce.nonce_id}`)
    },
  }),
  defineCheck({
    id: 'nonces.safe-routes-exempt',
    description: 'strict nonces: a session-allowed GET is allowed at once, with no preflight and no execution_nonce',
    specRef: 'Gate design: docs/kernel.md (NonceGuard runs on deny-by-default routes)',
    required: false,
    needs: ['strict-nonces'],
    async run(ctx) {
      const route = ctx.route('session-allowed GET route', r => r.decision === 'SessionAllow' && r.method === 'GET')
      const e = await ctx.evaluate(ctx.requestFor(route))
      const what = `${route.method} ${route.pattern} without a nonce`
      expectAllow(e, what)
      if (e.answer.execution_nonce !== undefined) fail(`${what}: the allow carries an execution_nonce`)
    },
  }),
]
