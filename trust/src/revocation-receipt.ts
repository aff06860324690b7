// The receipt body a revocation signs (spec 02: gate_receipt_sign_failed covers a revocation receipt that
// could not be signed), shared by the sidecar's and trust-control's revocation routes.
import { callerIdentityHash, contentHash, uuidv7, type HttpReceiptBody } from '@gate/sdk'

const PATTERN = '/v1/revocations'

export function revocationReceiptBody(capabilityId: string, policyHash: string, timestamp: number): HttpReceiptBody {
  return {
    request_id: uuidv7(),
    route_pattern: PATTERN,
    method: 'POST',
    caller_identity_hash: callerIdentityHash({ subject: 'control', auth_method: { method: 'anonymous' } }),
    verdict: { verdict: 'allow' },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'caller_executed',
    redaction_mode: 'none',
    evidence: [{ guard_name: 'RevocationGuard', verdict: true, details: `capability ${capabilityId} revoked` }],
    response_status: 200,
    timestamp,
    content_hash: contentHash({ method: 'POST', path: PATTERN, route_pattern: PATTERN, query: {}, body_hash: null }),
    policy_hash: policyHash,
    trust_level: 'mediated',
    capability_id: capabilityId,
    metadata: { gate_revocation: true },
  }
}
