import { checkSchema } from '../examples/check-schema.js'
import {
  advisoryReceipt,
  coreReceipt,
  hex,
  HYBRID_P384_KEY,
  HYBRID_P384_SIGNATURE,
  P256_KEY,
  P256_SIGNATURE,
  P384_KEY,
  P384_SIGNATURE,
  traceReceipt,
  variant,
} from '../examples/values.js'

const mediated = coreReceipt()
const trace = traceReceipt()
const advisory = advisoryReceipt()
const withBbs = variant(mediated, (v) => ((v.bbs_projection_version = 'gate.bbs-projection.receipt.v1'), (v.bbs_signature = 'b'.repeat(160))))

checkSchema(
  'gate.receipt.v1',
  [
    { name: 'a mediated allow mapped from an HTTP receipt', value: mediated },
    { name: 'a mediated deny', value: variant(mediated, (v) => (v.decision = { verdict: 'deny', reason: 'no capability', guard: 'CapabilityGuard' })) },
    { name: 'a mediated cancelled', value: variant(mediated, (v) => (v.decision = { verdict: 'cancelled', reason: 'timeout' })) },
    { name: 'a mediated incomplete', value: variant(mediated, (v) => (v.decision = { verdict: 'incomplete', reason: 'nonce required' })) },
    { name: 'a trace observation', value: trace },
    { name: 'a trace observation without outcome', value: variant(trace, (v) => delete v.observation_outcome) },
    { name: 'an advisory evaluation', value: advisory },
    { name: 'a BBS-signed receipt', value: withBbs },
    { name: 'no bbs_projection_version or tenant_id', value: variant(mediated, (v) => (delete v.bbs_projection_version, delete v.tenant_id)) },
    { name: 'a tenant', value: variant(mediated, (v) => (v.tenant_id = 'acme')) },
    { name: 'algorithm ed25519', value: variant(mediated, (v) => (v.algorithm = 'ed25519')) },
    { name: 'algorithm p256', value: variant(mediated, (v) => ((v.algorithm = 'p256'), (v.kernel_key = P256_KEY), (v.signature = P256_SIGNATURE))) },
    { name: 'algorithm p384', value: variant(mediated, (v) => ((v.algorithm = 'p384'), (v.kernel_key = P384_KEY), (v.signature = P384_SIGNATURE))) },
    ...['caller_executed', 'host_executed_provider_reported', 'host_executed_unmediated'].map((origin) => ({
      name: `tool_origin ${origin}`,
      value: variant(mediated, (v) => (v.tool_origin = origin)),
    })),
    ...['none', 'summary', 'redacted'].map((mode) => ({ name: `redaction_mode ${mode}`, value: variant(mediated, (v) => (v.redaction_mode = mode)) })),
    {
      name: 'DAG members',
      value: variant(mediated, (v) => {
        v.chainId = 'chain-1'
        v.parentReceiptIds = [hex(64, 1), hex(64, 2)]
        v.parentSetHash = hex(64, 3)
        v.dagOrdinal = 4
        v.hlc = { wallSeconds: 1_763_700_000, logical: 2, kernelId: hex(16, 5) }
      }),
    },
    { name: 'a hybrid key and signature, no algorithm hint', value: variant(mediated, (v) => ((v.kernel_key = HYBRID_P384_KEY), (v.signature = HYBRID_P384_SIGNATURE))) },
    {
      name: 'reserved metadata keys',
      value: variant(mediated, (v) => {
        v.metadata = {
          gate_receipt_signing_nonce: 'pre-id',
          delivery_contract: { schema: 'gate.delivery-contract.v1', expected_digest: hex(64, 4), observed_digest: hex(64, 4), result: 'matched' },
          financial: { charged: { units: 5, currency: 'USD' } },
        }
      }),
    },
    {
      name: 'a mismatched delivery contract',
      value: variant(mediated, (v) => (v.metadata = { delivery_contract: { expected_digest: hex(64, 5), observed_digest: hex(64, 6), result: 'mismatched' } })),
    },
    { name: 'an additive member', value: variant(mediated, (v) => (v.hlc = { wallSeconds: 1, logical: 0, kernelId: 'k' })) },
  ],
  [
    { name: 'a mediated decision without decision', value: variant(mediated, (v) => delete v.decision), at: '(root)' },
    { name: 'a mediated decision with detect_only', value: variant(mediated, (v) => (v.boundary_class = 'detect_only')), at: '/boundary_class' },
    { name: 'a mediated decision with advisory_only', value: variant(mediated, (v) => (v.boundary_class = 'advisory_only')), at: '/boundary_class' },
    { name: 'a mediated decision with verified trust', value: variant(mediated, (v) => (v.trust_level = 'verified')), at: '/trust_level' },
    { name: 'a mediated decision with an observation outcome', value: variant(mediated, (v) => (v.observation_outcome = 'x')), at: '/observation_outcome' },
    { name: 'a trace observation with a decision', value: variant(trace, (v) => (v.decision = { verdict: 'allow' })), at: '/decision' },
    { name: 'a trace observation with prevent', value: variant(trace, (v) => (v.boundary_class = 'prevent')), at: '/boundary_class' },
    { name: 'a trace observation with mediated trust', value: variant(trace, (v) => (v.trust_level = 'mediated')), at: '/trust_level' },
    { name: 'an advisory evaluation with a decision', value: variant(advisory, (v) => (v.decision = { verdict: 'deny', reason: 'r', guard: 'G' })), at: '/decision' },
    { name: 'an advisory evaluation with verified trust', value: variant(advisory, (v) => (v.trust_level = 'verified')), at: '/trust_level' },
    { name: 'an advisory evaluation with detect_only', value: variant(advisory, (v) => (v.boundary_class = 'detect_only')), at: '/boundary_class' },
    { name: 'an unknown receipt kind', value: variant(mediated, (v) => (v.receipt_kind = 'observation')), at: '/receipt_kind' },
    { name: 'an unknown trust level', value: variant(mediated, (v) => (v.trust_level = 'trusted')), at: '/trust_level' },
    { name: 'an unknown boundary class', value: variant(trace, (v) => (v.boundary_class = 'observe')), at: '/boundary_class' },
    { name: "the HTTP verdict's cancel tag", value: variant(mediated, (v) => (v.decision = { verdict: 'cancel', reason: 'r' })), at: '/decision' },
    {
      name: 'a deny decision with http_status',
      value: variant(mediated, (v) => (v.decision = { verdict: 'deny', reason: 'r', guard: 'G', http_status: 403 })),
      at: '/decision',
    },
    { name: 'a projection version without a BBS signature', value: variant(withBbs, (v) => delete v.bbs_signature), at: '(root)' },
    { name: 'a BBS signature with a null projection version', value: variant(withBbs, (v) => (v.bbs_projection_version = null)), at: '/bbs_projection_version' },
    { name: 'a BBS signature without projection version', value: variant(withBbs, (v) => delete v.bbs_projection_version), at: '(root)' },
    { name: 'another projection version', value: variant(withBbs, (v) => (v.bbs_projection_version = 'gate.bbs-projection.receipt.v2')), at: '/bbs_projection_version' },
    { name: 'ed25519 with a P-256 key', value: variant(mediated, (v) => ((v.algorithm = 'ed25519'), (v.kernel_key = P256_KEY))), at: '/kernel_key' },
    { name: 'p384 with a P-256 signature', value: variant(mediated, (v) => ((v.algorithm = 'p384'), (v.kernel_key = P384_KEY), (v.signature = P256_SIGNATURE))), at: '/signature' },
    { name: 'algorithm hybrid', value: variant(mediated, (v) => (v.algorithm = 'hybrid')), at: '/algorithm' },
    { name: 'duplicate parent receipt ids', value: variant(mediated, (v) => (v.parentReceiptIds = [hex(64), hex(64)])), at: '/parentReceiptIds' },
    { name: 'a clock without kernelId', value: variant(mediated, (v) => (v.hlc = { wallSeconds: 1, logical: 0 })), at: '/hlc' },
    { name: 'a negative logical clock', value: variant(mediated, (v) => (v.hlc = { wallSeconds: 1, logical: -1, kernelId: 'k' })), at: '/hlc/logical' },
    { name: 'a clock with another member', value: variant(mediated, (v) => (v.hlc = { wallSeconds: 1, logical: 0, kernelId: 'k', node: 'x' })), at: '/hlc' },
    { name: 'an uppercase parent receipt id', value: variant(mediated, (v) => (v.parentReceiptIds = ['A'.repeat(64)])), at: '/parentReceiptIds/0' },
    {
      name: 'a partial delivery contract result',
      value: variant(mediated, (v) => (v.metadata = { delivery_contract: { expected_digest: hex(64), observed_digest: hex(64), result: 'partial' } })),
      at: '/metadata/delivery_contract/result',
    },
    { name: 'an action without parameter_hash', value: variant(mediated, (v) => delete v.action.parameter_hash), at: '/action' },
    { name: 'an uppercase id', value: variant(mediated, (v) => (v.id = v.id.toUpperCase())), at: '/id' },
    { name: 'a null capability_id', value: variant(mediated, (v) => (v.capability_id = null)), at: '/capability_id' },
    { name: 'a missing tool_server', value: variant(mediated, (v) => delete v.tool_server), at: '(root)' },
  ],
)
