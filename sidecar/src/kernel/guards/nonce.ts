// Strict execution-nonce preflight (spec 02): a deny-by-default request that would be allowed is first
// answered `incomplete` with a signed, single-use nonce bound to caller, route and content hash; the
// retry presenting it is evaluated normally and reuses the bound request id.
import { verifySignature, canonicalJson, utf8, type SignedExecutionNonce } from '@gate/sdk'
import type { NoncePort } from '../ports.js'
import { deny, type Guard, type GuardContext, type GuardOutcome } from './guard.js'

export class NonceGuard implements Guard {
  readonly name = 'NonceGuard'
  constructor(
    private readonly nonces: NoncePort,
    private readonly trustedKeys: () => Iterable<string>,
  ) {}

  async check(ctx: GuardContext): Promise<GuardOutcome> {
    const presented = ctx.presentedNonce
    if (presented !== undefined && !isSignedByTrustedKey(presented, this.trustedKeys())) {
      return deny(this.name, 'execution nonce signature does not verify', { details: { reason_code: 'nonce_invalid' } })
    }
    const nonceId = presented?.nonce_id ?? ctx.nonceId
    if (nonceId === undefined) {
      return {
        pass: false,
        verdict: { verdict: 'incomplete', reason: 'execution nonce required: retry presenting the issued nonce' },
        evidence: { guard_name: this.name, verdict: false, details: 'strict nonce preflight' },
        issueNonce: true,
      }
    }
    const bindings = { callerIdentityHash: ctx.callerIdentityHash, ...ctx.subject.bindings, contentHash: ctx.contentHash }
    const result = await this.nonces.consume(nonceId, bindings, ctx.now)
    if (!result.ok) {
      return deny(this.name, `execution nonce ${result.reason === 'mismatch' ? 'is bound to another request' : `is ${result.reason}`}`, {
        details: { reason_code: `nonce_${result.reason}` },
      })
    }
    ctx.boundRequestId = result.requestId
    return { pass: true, evidence: { guard_name: this.name, verdict: true, details: `execution nonce ${nonceId} consumed` } }
  }
}

function isSignedByTrustedKey(nonce: SignedExecutionNonce, trusted: Iterable<string>): boolean {
  const { signature, ...body } = nonce
  if (![...trusted].includes(nonce.kernel_key)) return false
  try {
    return verifySignature(nonce.kernel_key, utf8(canonicalJson(body)), signature)
  } catch {
    return false
  }
}
