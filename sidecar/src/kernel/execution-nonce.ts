// A strict preflight's execution nonce (spec 02, gate.execution_nonce.v1): signed by the authority,
// single use, bound to the caller, the method, the route and the content hash of an HTTP request.
import { randomBytes } from 'node:crypto'
import { canonicalJson, utf8, type HttpMethod, type SignedExecutionNonce, type Signer } from '@gate/sdk'
import type { GuardContext } from './guards/guard.js'

/** Signs a new nonce for the call `ctx` describes. */
export function signExecutionNonce(signer: Signer, input: { requestId: string; ctx: GuardContext; now: number; ttlSeconds: number }): SignedExecutionNonce {
  const { ctx, now } = input
  const body = {
    schema: 'gate.execution_nonce.v1' as const,
    nonce_id: randomBytes(16).toString('hex'),
    request_id: input.requestId,
    caller_identity_hash: ctx.callerIdentityHash,
    // only HTTP requests get the preflight (DecisionSubject.strictNonce), so the binding is an HTTP method
    method: ctx.subject.bindings.method as HttpMethod,
    route_pattern: ctx.subject.bindings.routePattern,
    content_hash: ctx.contentHash,
    issued_at: now,
    expires_at: now + input.ttlSeconds,
    kernel_key: signer.publicKey,
  }
  return { ...body, signature: signer.sign(utf8(canonicalJson(body))) }
}
