// Example receipt bodies and signers for tests across packages (deterministic seeds; not secrets).
import type { CoreReceiptBody, HttpReceiptBody } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import { sha256Hex } from './sha256.js'
import { callerIdentityHash, contentHash, ANONYMOUS_CALLER } from './content-hash.js'
import { createSigner, type Signer } from './signer.js'
import type { KeyAlgorithm } from './keys.js'
import type { CryptoBackendName } from './crypto-backend.js'

/** A deterministic test signer: `fill` repeated as the secret. */
export function exampleSigner(algorithm: KeyAlgorithm = 'ed25519', fill = 7, backend?: CryptoBackendName): Signer {
  const len = algorithm === 'p384' ? 48 : 32
  return createSigner({ algorithm, secret: new Uint8Array(len).fill(fill), backend })
}

/** A realistic unsigned HttpReceipt body (allow on GET /pets/{id}). */
export function exampleReceiptBody(overrides: Partial<HttpReceiptBody> = {}): HttpReceiptBody {
  const request = { method: 'GET' as const, path: '/pets/42', route_pattern: '/pets/{id}', query: { verbose: 'true' }, body_hash: null }
  return {
    request_id: '01938f4e-7a2b-7c3d-8e4f-0123456789ab',
    route_pattern: request.route_pattern,
    method: request.method,
    caller_identity_hash: callerIdentityHash(ANONYMOUS_CALLER),
    session_id: null,
    verdict: { verdict: 'allow' },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'caller_executed',
    redaction_mode: 'none',
    evidence: [{ guard_name: 'DefaultPolicyGuard', verdict: true, details: 'safe method' }],
    response_status: 200,
    timestamp: 1_763_700_000,
    content_hash: contentHash(request),
    policy_hash: 'a'.repeat(64),
    trust_level: 'mediated',
    capability_id: null,
    metadata: { gate_http_status_scope: 'decision' },
    ...overrides,
  }
}

/** An unsigned core receipt body of a tool call (`gate.receipt.v1` less its id, signer and signature): an allowed `read_file`. */
export function exampleCoreReceiptDraft(n = 0, overrides: Partial<CoreReceiptBody> = {}): Omit<CoreReceiptBody, 'id' | 'kernel_key' | 'algorithm'> {
  const parameters = { path: `/tmp/file-${n}.txt` }
  return {
    timestamp: 1_700_000_000 + n,
    capability_id: '',
    tool_server: 'fs',
    tool_name: 'read_file',
    action: { parameters, parameter_hash: sha256Hex(canonicalJson(parameters)) },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'host_executed_provider_reported',
    redaction_mode: 'none',
    decision: { verdict: 'allow' },
    content_hash: 'c'.repeat(64),
    policy_hash: 'd'.repeat(64),
    trust_level: 'mediated',
    tenant_id: null,
    bbs_projection_version: null,
    metadata: null,
    ...overrides,
  }
}
