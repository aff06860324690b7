// The broken sidecar's receipts (test support, beside broken-sidecar.ts): signing, the content and
// caller hashes, and the /gate/verify answer, each with the switches of the faults aimed at them.
import {
  authoritySemanticsProblem,
  callerIdentityHash,
  canonicalJson,
  checkSignature,
  contentHash,
  sha256Hex,
  signHttpReceiptJson,
  utf8,
  uuidv7,
  type GateHttpRequest,
  type GuardEvidence,
  type HttpMethod,
  type HttpReceipt,
  type HttpReceiptBody,
  type Verdict,
} from '@gate/sdk'
import type { BrokenState } from './broken-state.js'

const HEX64 = /^[0-9a-f]{64}$/

export type BrokenReceipts = ReturnType<typeof createBrokenReceipts>

export function createBrokenReceipts(state: BrokenState) {
  const { has, signer, policyHash, receipts, storedTexts } = state

  function signReceipt(request: GateHttpRequest, verdict: Verdict, evidence: GuardEvidence[], pattern: string, capabilityId: string | null, status: number) {
    const query = has('content-hash-without-query') ? {} : has('content-hash-keeps-capability') ? { ...request.query } : queryForHash(request.query)
    const hashInput = { body_hash: request.body_hash ?? null, method: String(request.method), path: String(request.path), query, route_pattern: pattern }
    const body: HttpReceiptBody = {
      request_id: has('own-request-id') ? uuidv7() : request.request_id,
      route_pattern: pattern,
      method: request.method as HttpMethod,
      caller_identity_hash: callerHash(request.caller),
      session_id: request.session_id ?? null,
      verdict,
      receipt_kind: 'mediated_decision',
      boundary_class: 'prevent',
      tool_origin: has('wrong-semantics') ? 'host_executed_unmediated' : 'caller_executed',
      redaction_mode: 'none',
      evidence,
      response_status: has('allow-status-for-deny') ? 200 : status,
      timestamp: has('timestamp-zero') ? 0 : Math.floor(Date.now() / 1000),
      content_hash: has('content-hash-code-point-sort') ? codePointSortedHash(hashInput) : contentHash(hashInput),
      policy_hash: has('policy-hash-zero') ? '0'.repeat(64) : policyHash,
      trust_level: 'mediated',
      capability_id: capabilityId,
      metadata: has('no-metadata') ? null : { gate_http_status_scope: 'decision' },
    }
    const signed = signHttpReceiptJson(body, signer)
    const receipt = signed.receipt as unknown as Record<string, unknown>
    receipts.push(receipt as unknown as HttpReceipt)
    storedTexts.set(signed.receipt.id, signed.json)
    if (has('unsigned-receipts')) delete receipt.signature
    if (has('stale-receipt-id')) {
      const { id: _id, signature: _sig, ...rest } = receipt
      const withStaleId = { ...rest, id: sha256Hex(`stale:${String(receipt.id)}`) }
      return { ...withStaleId, signature: signer.sign(utf8(canonicalJson(withStaleId))) }
    }
    return receipt
  }

  function requestContentHash(request: GateHttpRequest, pattern: string): string {
    return contentHash({ body_hash: request.body_hash ?? null, method: String(request.method), path: String(request.path), query: queryForHash(request.query), route_pattern: pattern })
  }

  function queryForHash(query: Record<string, string> | undefined): Record<string, string> {
    // Gate's choice (docs/kernel.md): the token is a credential, not content
    const copy: Record<string, string> = has('drop-proto-keys') ? Object.assign({}, query) : { ...query }
    delete copy.gate_capability
    return copy
  }

  function callerHash(caller: unknown): string {
    if (has('caller-hash-subject-only')) return sha256Hex(canonicalJson({ subject: (caller as { subject?: unknown })?.subject ?? null }))
    if (has('caller-hash-as-sent')) return sha256Hex(canonicalJson(caller))
    return callerIdentityHash(caller as GateHttpRequest['caller'])
  }

  function verifyReceipt(r: Record<string, unknown>): Record<string, unknown> {
    const { signature: _sig, ...signed } = r
    const { id: _id, ...unsigned } = signed
    const kernelKey = typeof r.kernel_key === 'string' ? r.kernel_key : ''
    const semanticsOk = has('verify-skip-semantics') || authoritySemanticsProblem(r) === undefined
    const idValid = has('verify-skip-id') || (typeof r.id === 'string' && sha256Hex(canonicalJson(unsigned)) === r.id)
    const cryptoOk =
      has('verify-id-only') ||
      (typeof r.signature === 'string' && !(has('verify-ed25519-only') && kernelKey.includes(':')) && checkSignature(kernelKey, utf8(canonicalJson(signed)), r.signature).valid)
    const now = Math.floor(Date.now() / 1000)
    const timely = !has('verify-checks-timestamp') || Math.abs(Number(r.timestamp) - now) < 86_400
    const signatureValid = semanticsOk && idValid && cryptoOk && timely
    const trusted = has('verify-untrusted-own-key') ? [] : has('verify-trust-embedded-key') ? [signer.publicKey, kernelKey] : [signer.publicKey]
    const signerTrusted = kernelKey !== '' && trusted.includes(kernelKey)
    const parameterHashValid = has('verify-skip-parameter-hash') || HEX64.test(String(r.content_hash))
    const tag = String((r.verdict as { verdict?: unknown } | undefined)?.verdict ?? '')
    const result = has('verify-raw-result') ? tag : ({ allow: 'allow', deny: 'deny', cancel: 'cancelled', incomplete: 'incomplete' } as Record<string, string>)[tag] ?? tag
    const ok = signatureValid && signerTrusted && idValid && parameterHashValid && semanticsOk
    const answer: Record<string, unknown> = {
      signature_valid: signatureValid,
      signer_trusted: signerTrusted,
      receipt_id_valid: idValid,
      parameter_hash_valid: parameterHashValid,
      receipt_kind: String(r.receipt_kind ?? ''),
      boundary_class: String(r.boundary_class ?? ''),
      trust_level: String(r.trust_level ?? ''),
      result,
      authorized: has('verify-deny-authorized') ? ok : ok && result === 'allow',
      signer_key_hex: kernelKey,
      ok,
    }
    if (has('verify-omit-field')) delete answer.signer_key_hex
    return answer
  }

  return { signReceipt, requestContentHash, callerHash, verifyReceipt }
}

/** content_hash with the query keys sorted by code point (a fault: RFC 8785 sorts by UTF-16 units). */
function codePointSortedHash(input: { body_hash: string | null; method: string; path: string; query: Record<string, string>; route_pattern: string }): string {
  const keys = Object.keys(input.query).sort((a, b) => {
    const ca = [...a].map(c => c.codePointAt(0)!)
    const cb = [...b].map(c => c.codePointAt(0)!)
    for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return ca[i]! - cb[i]!
    return ca.length - cb.length
  })
  const query = `{${keys.map(k => `${JSON.stringify(k)}:${JSON.stringify(input.query[k])}`).join(',')}}`
  return sha256Hex(`{"body_hash":${JSON.stringify(input.body_hash)},"method":${JSON.stringify(input.method)},"path":${JSON.stringify(input.path)},"query":${query},"route_pattern":${JSON.stringify(input.route_pattern)}}`)
}
