// Does the receipt belong to the request that was sent? A valid signature alone proves only that the
// sidecar signed *something*; these checks bind it to this request: id, method, caller, path and
// content (spec 02, Content hash), and the verdict the answer claims.
import { canonicalJson } from '../protocol/canonical-json.js'
import { callerIdentityHash, contentHash } from '../protocol/content-hash.js'
import type { GateHttpRequest } from '../types.js'
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
  if (canonicalJson(answer.verdict) !== canonicalJson(receipt.verdict)) return 'the answer\'s verdict differs from the receipt\'s'
  if (receipt.request_id !== request.request_id && !isNonceRetry(answer, sent)) return 'request_id belongs to another request'
  if (receipt.method !== request.method) return 'method differs from the request'
  if (receipt.caller_identity_hash !== callerIdentityHash(request.caller)) return 'caller_identity_hash differs from the caller sent'
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
