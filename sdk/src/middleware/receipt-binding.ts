// Does the receipt belong to the request that was sent? A valid signature alone proves only that the
// sidecar signed *something*; these checks bind it to this request: id, method, caller, path and
// content (spec 02, Content hash), and the verdict the answer claims.
import { callerIdentityHash, contentHash } from '../protocol/content-hash.js'
import type { CallerIdentity, GateHttpRequest } from '../types.js'
import { patternMatchesPath } from './route-pattern.js'
import type { SidecarEvaluation } from './sidecar-client.js'

/** What the core sent, to check the receipt against. */
export interface SentRequest {
  request: GateHttpRequest
  /** Presented X-Gate-Execution-Nonce id, if any. */
  nonceId: string | undefined
  /** The request id the core recorded for that nonce when it issued the preflight answer, if known. */
  nonceBoundRequestId: string | undefined
}

/** Why the receipt is not bound to `sent`, or undefined when it is. */
export function receiptBindingProblem(answer: SidecarEvaluation, sent: SentRequest): string | undefined {
  const { receipt } = answer
  const { request } = sent
  if (!isSameJson(answer.verdict, receipt.verdict)) return 'the answer\'s verdict differs from the receipt\'s'
  if (receipt.request_id !== request.request_id && !isNonceRetry(answer, sent)) return 'request_id belongs to another request'
  if (receipt.method !== request.method) return 'method differs from the request'
  if (receipt.caller_identity_hash !== identityHashOf(request.caller)) return 'caller_identity_hash differs from the caller sent'
  if (!patternMatchesPath(receipt.route_pattern, request.path)) return `route_pattern ${receipt.route_pattern} does not match path ${request.path}`
  const expected = contentHash({ body_hash: request.body_hash ?? null, method: request.method, path: request.path, query: request.query ?? {}, route_pattern: receipt.route_pattern })
  if (receipt.content_hash !== expected) return 'content_hash does not bind this request\'s method, path, query and body'
  return undefined
}

/**
 * spec 01: a retry presenting an execution nonce reuses the request id bound to that nonce. Accept it
 * when that id is the one this core saw issued; a nonce issued through another instance is accepted on
 * the signed NonceGuard evidence (the content checks above still bind the receipt to this request).
 */
function isNonceRetry(answer: SidecarEvaluation, sent: SentRequest): boolean {
  if (sent.nonceId === undefined) return false
  if (sent.nonceBoundRequestId !== undefined) return answer.receipt.request_id === sent.nonceBoundRequestId
  return (answer.receipt.evidence ?? []).some(e => e.guard_name === 'NonceGuard' && e.verdict)
}

/** Deep equality of two parsed JSON values (member order aside), as their canonical forms would compare. */
function isSameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const keys = Object.keys(x)
  if (keys.length !== Object.keys(y).length) return false
  for (const k of keys) if (!Object.hasOwn(y, k) || !isSameJson(x[k], y[k])) return false
  return true
}

// The built-in identity chain hands out frozen identities, one object per credential (caller-identity.ts),
// so a repeat caller's hash is computed once; anything not frozen through is hashed every time.
const identityHashes = new WeakMap<CallerIdentity, string>()

function identityHashOf(caller: CallerIdentity): string {
  if (!Object.isFrozen(caller) || !Object.isFrozen(caller.auth_method)) return callerIdentityHash(caller)
  let hash = identityHashes.get(caller)
  if (hash === undefined) {
    hash = callerIdentityHash(caller)
    identityHashes.set(caller, hash)
  }
  return hash
}
