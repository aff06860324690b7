import { checkSchema } from '../examples/check-schema.js'
import { ED25519_KEY, errorBody, executionNonce, health, hex, HYBRID_ED25519_KEY, P384_KEY, P384_SIGNATURE, verifyResponse, variant } from '../examples/values.js'

const verified = verifyResponse()
const failed = variant(verified, (v) => ((v.signature_valid = false), (v.ok = false), (v.authorized = false)))

checkSchema(
  'gate.http.verify_response.v1',
  [
    { name: 'an authorized allow', value: verified },
    { name: 'a verified deny (ok, not authorized)', value: variant(verified, (v) => ((v.result = 'deny'), (v.authorized = false))) },
    ...['allow', 'deny', 'cancelled', 'incomplete'].map((result) => ({ name: `a failed verification of ${result}`, value: variant(failed, (v) => (v.result = result)) })),
    { name: 'a failed verification of a trace receipt', value: variant(failed, (v) => (v.receipt_kind = 'trace_observation')) },
    { name: 'an additive member', value: variant(verified, (v) => (v.checked_at = 1)) },
  ],
  [
    { name: 'ok with an invalid signature', value: variant(verified, (v) => (v.signature_valid = false)), at: '/signature_valid' },
    { name: 'ok with an untrusted signer', value: variant(verified, (v) => (v.signer_trusted = false)), at: '/signer_trusted' },
    { name: 'ok with a wrong id', value: variant(verified, (v) => (v.receipt_id_valid = false)), at: '/receipt_id_valid' },
    { name: 'ok with a malformed parameter hash', value: variant(verified, (v) => (v.parameter_hash_valid = false)), at: '/parameter_hash_valid' },
    { name: 'ok for a trace receipt', value: variant(verified, (v) => (v.receipt_kind = 'trace_observation')), at: '/receipt_kind' },
    { name: 'ok for detect_only', value: variant(verified, (v) => (v.boundary_class = 'detect_only')), at: '/boundary_class' },
    { name: 'ok for verified trust', value: variant(verified, (v) => (v.trust_level = 'verified')), at: '/trust_level' },
    { name: 'authorized without ok', value: variant(failed, (v) => (v.authorized = true)), at: '/ok' },
    { name: 'authorized for a deny', value: variant(verified, (v) => (v.result = 'deny')), at: '/result' },
    { name: "the HTTP verdict's cancel as result", value: variant(failed, (v) => (v.result = 'cancel')), at: '/result' },
    { name: 'a missing signer_key_hex', value: variant(verified, (v) => delete v.signer_key_hex), at: '(root)' },
    { name: 'a string ok', value: variant(failed, (v) => (v.ok = 'false')), at: '/ok' },
  ],
)

const healthy = health()

checkSchema(
  'gate.http.health.v1',
  [
    ...['healthy', 'degraded', 'unhealthy'].map((status) => ({ name: `status ${status}`, value: variant(healthy, (v) => (v.status = status)) })),
    ...['', 'durable', 'ephemeral'].map((backend) => ({ name: `receipt_backend "${backend}"`, value: variant(healthy, (v) => (v.receipt_backend = backend)) })),
    ...['', 'durable', 'remote', 'ephemeral'].map((backend) => ({
      name: `revocation_backend "${backend}"`,
      value: variant(healthy, (v) => (v.revocation_backend = backend)),
    })),
    { name: '/gate/live without kernel_key', value: { status: 'healthy', version: '0.1.0', receipt_backend: '', revocation_backend: '' } },
    { name: 'a P-384 kernel key', value: variant(healthy, (v) => (v.kernel_key = P384_KEY)) },
    { name: 'a hybrid kernel key and the capabilities envelope', value: variant(healthy, (v) => ((v.kernel_key = HYBRID_ED25519_KEY), (v.capabilities = { schema: 'gate.capabilities.v1', features: { accepts_hybrid_signatures: true } }))) },
    { name: 'an additive member', value: variant(healthy, (v) => (v.uptime_s = 5)) },
  ],
  [
    { name: 'status ok', value: variant(healthy, (v) => (v.status = 'ok')), at: '/status' },
    { name: 'capabilities of another schema', value: variant(healthy, (v) => (v.capabilities = { schema: 'gate.capabilities.v2', features: {} })), at: '/capabilities/schema' },
    { name: 'a remote receipt backend', value: variant(healthy, (v) => (v.receipt_backend = 'remote')), at: '/receipt_backend' },
    { name: 'an unknown revocation backend', value: variant(healthy, (v) => (v.revocation_backend = 'sqlite')), at: '/revocation_backend' },
    { name: 'an uppercase kernel key', value: variant(healthy, (v) => (v.kernel_key = ED25519_KEY.toUpperCase())), at: '/kernel_key' },
    { name: 'a missing version', value: variant(healthy, (v) => delete v.version), at: '(root)' },
    { name: 'a missing receipt_backend', value: variant(healthy, (v) => delete v.receipt_backend), at: '(root)' },
  ],
)

const body = errorBody()
const approval = { error: 'gate_approval_required', message: 'approval pending', receipt_id: null, suggestion: null, kernel_receipt_id: hex(64, 3) }
const CODES = [
  'gate_bad_request',
  'gate_access_denied',
  'gate_evaluation_failed',
  'gate_receipt_sign_failed',
  'gate_receipt_persistence_failed',
  'gate_sidecar_unreachable',
  'gate_invalid_receipt',
  'gate_timeout',
  'gate_sidecar_unavailable',
  'gate_payload_too_large',
  'gate_not_found',
  'gate_method_not_allowed',
  'gate_unauthorized',
  'gate_forbidden',
  'gate_conflict',
]

checkSchema(
  'gate.http.error_body.v1',
  [
    ...CODES.map((code) => ({ name: code, value: variant(body, (v) => (v.error = code)) })),
    { name: 'gate_approval_required without a handle', value: approval },
    { name: 'gate_approval_required with a handle', value: { ...approval, approval_id: 'apr-1', resume_path: '/approvals/apr-1/respond' } },
    { name: 'only error and message', value: { error: 'gate_timeout', message: 'no answer within 5000 ms' } },
    { name: 'an additive member', value: variant(body, (v) => (v.request_id = 'r-1')) },
  ],
  [
    { name: "this package's own gate_unknown_schema", value: variant(body, (v) => (v.error = 'gate_unknown_schema')), at: '/error' },
    { name: 'an unknown code', value: variant(body, (v) => (v.error = 'forbidden')), at: '/error' },
    { name: 'a missing message', value: variant(body, (v) => delete v.message), at: '(root)' },
    { name: 'a numeric receipt_id', value: variant(body, (v) => (v.receipt_id = 5)), at: '/receipt_id' },
    { name: 'approval required without kernel_receipt_id', value: variant(approval, (v) => delete v.kernel_receipt_id), at: '(root)' },
    { name: 'an approval_id without resume_path', value: { ...approval, approval_id: 'apr-1' }, at: '(root)' },
    { name: 'a resume_path without approval_id', value: { ...approval, resume_path: '/approvals/apr-1/respond' }, at: '(root)' },
    { name: 'a resume_path with an extra segment', value: { ...approval, approval_id: 'a', resume_path: '/approvals/a/respond/now' }, at: '/resume_path' },
    { name: 'a resume_path with an empty id', value: { ...approval, approval_id: 'a', resume_path: '/approvals//respond' }, at: '/resume_path' },
    { name: 'kernel_receipt_id on an access denial', value: variant(body, (v) => (v.kernel_receipt_id = hex(64))), at: '/kernel_receipt_id' },
  ],
)

const nonce = executionNonce()
const NONCE_REQUIRED = Object.keys(nonce)

checkSchema(
  'gate.execution_nonce.v1',
  [
    { name: 'an Ed25519 nonce', value: nonce },
    { name: 'a P-384 nonce', value: variant(nonce, (v) => ((v.kernel_key = P384_KEY), (v.signature = P384_SIGNATURE))) },
    { name: 'an additive member', value: variant(nonce, (v) => (v.capability_id = 'cap-7')) },
  ],
  [
    { name: 'another schema id', value: variant(nonce, (v) => (v.schema = 'gate.execution_nonce.v2')), at: '/schema' },
    ...NONCE_REQUIRED.map((member) => ({ name: `a missing ${member}`, value: variant(nonce, (v) => delete v[member]), at: '(root)' })),
    { name: 'a lowercase method', value: variant(nonce, (v) => (v.method = 'post')), at: '/method' },
    { name: 'an uppercase caller_identity_hash', value: variant(nonce, (v) => (v.caller_identity_hash = 'A'.repeat(64))), at: '/caller_identity_hash' },
    { name: 'a 63-hex content_hash', value: variant(nonce, (v) => (v.content_hash = hex(63))), at: '/content_hash' },
    { name: 'a negative issued_at', value: variant(nonce, (v) => (v.issued_at = -1)), at: '/issued_at' },
    { name: 'an empty nonce_id', value: variant(nonce, (v) => (v.nonce_id = '')), at: '/nonce_id' },
    { name: 'a malformed signature', value: variant(nonce, (v) => (v.signature = 'sig')), at: '/signature' },
  ],
)

const envelope = { schema: 'gate.capabilities.v1', features: { accepts_anchor_batch_v1: false, accepts_hybrid_signatures: true, delegation_chain_binding: true } }

checkSchema(
  'gate.capabilities.v1',
  [
    { name: "Gate's envelope", value: envelope },
    { name: 'no features', value: { schema: 'gate.capabilities.v1', features: {} } },
    { name: 'a feature Gate does not know', value: variant(envelope, (v) => (v.features.accepts_bbs_v2 = true)) },
  ],
  [
    { name: 'an unknown schema id', value: variant(envelope, (v) => (v.schema = 'gate.capabilities.v2')), at: '/schema' },
    { name: 'no schema', value: variant(envelope, (v) => delete v.schema), at: '(root)' },
    { name: 'a feature name with a capital', value: variant(envelope, (v) => (v.features.AcceptsHybrid = true)), at: '/features' },
    { name: 'a feature name with a dash', value: variant(envelope, (v) => (v.features['accepts-hybrid'] = true)), at: '/features' },
    { name: 'an empty feature name', value: variant(envelope, (v) => (v.features[''] = true)), at: '/features' },
    { name: 'a feature that is not a boolean', value: variant(envelope, (v) => (v.features.accepts_hybrid_signatures = 'yes')), at: '/features/accepts_hybrid_signatures' },
    { name: 'features as an array', value: variant(envelope, (v) => (v.features = ['accepts_hybrid_signatures'])), at: '/features' },
    { name: 'an additive member', value: variant(envelope, (v) => (v.version = 1)), at: '(root)' },
  ],
)
