// The schema registry: every id this package ships, its validator name, and the 15 ids of the HTTP
// family (spec 02, "The HTTP schema family has 15 schema files"). No runtime imports, so the edge
// entry point can share it.

/** The 15 HTTP-family schema ids, in spec 02's order. */
export const HTTP_SCHEMA_IDS = Object.freeze([
  'gate.http.caller_identity.v1',
  'gate.http.request.v1',
  'gate.http.error_envelope.v1',
  'gate.http.evaluate_request.v1',
  'gate.http.evaluate_response.v1',
  'gate.http.receipt.v1',
  'gate.http.session_init.v1',
  'gate.http.session_resume.v1',
  'gate.http.stream_frame.v1',
  'gate.http.verdict.v1',
  'gate.hosted.domain_event_envelope.v1',
  'gate.hosted.error.v1',
  'gate.hosted.mutation_response.v1',
  'gate.hosted.authenticated_request_context.v1',
  'gate.hosted.tenant_binding.v1',
] as const)

/** The schemas the services need beyond the HTTP family. */
export const EXTRA_SCHEMA_IDS = Object.freeze([
  'gate.capability.v1',
  'gate.receipt.v1',
  'gate.manifest.v1',
  'gate.http.verify_response.v1',
  'gate.http.health.v1',
  'gate.http.error_body.v1',
  'gate.execution_nonce.v1',
  'gate.checkpoint_statement.v2',
  'gate.checkpoint_consistency_proof.v2',
  'gate.transparency.inclusion-proof.v2',
  'gate.wire.agent_message.v1',
  'gate.wire.kernel_message.v1',
  'gate.capabilities.v1',
] as const)

/** The fleet protocol between a sidecar and trust-control (docs/fleet.md): validated on both sides. */
export const FLEET_SCHEMA_IDS = Object.freeze([
  'gate.fleet.ingest_request.v1',
  'gate.fleet.ingest_response.v1',
  'gate.fleet.enroll_request.v1',
  'gate.fleet.enrolled_key.v1',
  'gate.fleet.key_list.v1',
  'gate.fleet.revocation_page.v1',
  'gate.fleet.capture_request.v1',
  'gate.fleet.capture_result.v1',
  'gate.fleet.capture_cancel.v1',
  'gate.fleet.capture_cancelled.v1',
  'gate.fleet.authority.v1',
] as const)

export type HttpSchemaId = (typeof HTTP_SCHEMA_IDS)[number]
export type FleetSchemaId = (typeof FLEET_SCHEMA_IDS)[number]
export type SchemaId = HttpSchemaId | (typeof EXTRA_SCHEMA_IDS)[number] | FleetSchemaId

/** Every schema id this package ships; each is the name of a JSON file at the package root. */
export const SCHEMA_IDS: readonly SchemaId[] = Object.freeze([...HTTP_SCHEMA_IDS, ...EXTRA_SCHEMA_IDS, ...FLEET_SCHEMA_IDS])

/** Validator name for each id: the id without `gate.` and its version suffix, camelCased. */
export const VALIDATOR_NAMES = Object.freeze({
  'gate.http.caller_identity.v1': 'httpCallerIdentity',
  'gate.http.request.v1': 'httpRequest',
  'gate.http.error_envelope.v1': 'httpErrorEnvelope',
  'gate.http.evaluate_request.v1': 'httpEvaluateRequest',
  'gate.http.evaluate_response.v1': 'httpEvaluateResponse',
  'gate.http.receipt.v1': 'httpReceipt',
  'gate.http.session_init.v1': 'httpSessionInit',
  'gate.http.session_resume.v1': 'httpSessionResume',
  'gate.http.stream_frame.v1': 'httpStreamFrame',
  'gate.http.verdict.v1': 'httpVerdict',
  'gate.hosted.domain_event_envelope.v1': 'hostedDomainEventEnvelope',
  'gate.hosted.error.v1': 'hostedError',
  'gate.hosted.mutation_response.v1': 'hostedMutationResponse',
  'gate.hosted.authenticated_request_context.v1': 'hostedAuthenticatedRequestContext',
  'gate.hosted.tenant_binding.v1': 'hostedTenantBinding',
  'gate.capability.v1': 'capability',
  'gate.receipt.v1': 'receipt',
  'gate.manifest.v1': 'manifest',
  'gate.http.verify_response.v1': 'httpVerifyResponse',
  'gate.http.health.v1': 'httpHealth',
  'gate.http.error_body.v1': 'httpErrorBody',
  'gate.execution_nonce.v1': 'executionNonce',
  'gate.checkpoint_statement.v2': 'checkpointStatement',
  'gate.checkpoint_consistency_proof.v2': 'checkpointConsistencyProof',
  'gate.transparency.inclusion-proof.v2': 'transparencyInclusionProof',
  'gate.wire.agent_message.v1': 'wireAgentMessage',
  'gate.wire.kernel_message.v1': 'wireKernelMessage',
  'gate.capabilities.v1': 'capabilities',
  'gate.fleet.ingest_request.v1': 'fleetIngestRequest',
  'gate.fleet.ingest_response.v1': 'fleetIngestResponse',
  'gate.fleet.enroll_request.v1': 'fleetEnrollRequest',
  'gate.fleet.enrolled_key.v1': 'fleetEnrolledKey',
  'gate.fleet.key_list.v1': 'fleetKeyList',
  'gate.fleet.revocation_page.v1': 'fleetRevocationPage',
  'gate.fleet.capture_request.v1': 'fleetCaptureRequest',
  'gate.fleet.capture_result.v1': 'fleetCaptureResult',
  'gate.fleet.capture_cancel.v1': 'fleetCaptureCancel',
  'gate.fleet.capture_cancelled.v1': 'fleetCaptureCancelled',
  'gate.fleet.authority.v1': 'fleetAuthority',
} as const satisfies Record<SchemaId, string>)

export type ValidatorName = (typeof VALIDATOR_NAMES)[SchemaId]

const KNOWN_IDS: ReadonlySet<string> = new Set(SCHEMA_IDS)

/** True when `id` names a schema this package ships. */
export function isSchemaId(id: unknown): id is SchemaId {
  return typeof id === 'string' && KNOWN_IDS.has(id)
}
