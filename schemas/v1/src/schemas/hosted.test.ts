import { checkSchema } from '../examples/check-schema.js'
import { domainEvent, hex, hostedError, mutationResponse, requestContext, tenantBinding, variant } from '../examples/values.js'

const event = domainEvent()
const first = variant(event, (v) => ((v.sequence = 1), (v.prev_event_hash = null), (v.event_id = 'evt-1')))

checkSchema(
  'gate.hosted.domain_event_envelope.v1',
  [
    { name: 'the first event of a chain', value: first },
    { name: 'a later event', value: event },
    { name: 'an event without the optional schema', value: variant(event, (v) => delete v.schema) },
    { name: 'an additive member', value: variant(event, (v) => (v.session_id = 'sess-1')) },
  ],
  [
    { name: 'sequence 0', value: variant(first, (v) => (v.sequence = 0)), at: '/sequence' },
    { name: 'a first event with a predecessor hash', value: variant(first, (v) => (v.prev_event_hash = hex(64))), at: '/prev_event_hash' },
    { name: 'a later event without a predecessor hash', value: variant(event, (v) => (v.prev_event_hash = null)), at: '/sequence' },
    { name: 'a missing prev_event_hash', value: variant(event, (v) => delete v.prev_event_hash), at: '(root)' },
    { name: 'an uppercase prev_event_hash', value: variant(event, (v) => (v.prev_event_hash = 'A'.repeat(64))), at: '/prev_event_hash' },
    { name: 'a 63-hex event_hash', value: variant(event, (v) => (v.event_hash = hex(63))), at: '/event_hash' },
    { name: 'a one-segment event type', value: variant(event, (v) => (v.event_type = 'revoked')), at: '/event_type' },
    { name: 'a capitalised event type', value: variant(event, (v) => (v.event_type = 'Capability.Revoked')), at: '/event_type' },
    { name: 'an array payload', value: variant(event, (v) => (v.payload = [])), at: '/payload' },
    { name: 'a missing tenant_id', value: variant(event, (v) => delete v.tenant_id), at: '(root)' },
    { name: 'a negative occurred_at', value: variant(event, (v) => (v.occurred_at = -1)), at: '/occurred_at' },
    { name: 'another schema id', value: variant(event, (v) => (v.schema = 'gate.hosted.domain_event_envelope.v2')), at: '/schema' },
  ],
)

const error = hostedError()
const FIXED_FALSE = [
  'gate_bad_request',
  'gate_protocol_version_mismatch',
  'gate_unsupported_protocol_version',
  'gate_not_acceptable',
  'gate_payload_too_large',
  'gate_unsupported_media_type',
  'gate_session_terminated',
]
const EITHER = ['gate_unauthorized', 'gate_forbidden', 'gate_session_not_found', 'gate_session_not_ready', 'gate_replay_window_exceeded', 'gate_stream_already_open', 'gate_stale_term', 'gate_internal_error']

checkSchema(
  'gate.hosted.error.v1',
  [
    ...FIXED_FALSE.map((code) => ({ name: `${code} (not transient)`, value: variant(error, (v) => ((v.error = code), (v.transient = false))) })),
    ...EITHER.map((code) => ({ name: `${code} (transient)`, value: variant(error, (v) => ((v.error = code), (v.transient = true))) })),
    ...['gate_quorum_unavailable', 'gate_capacity_exhausted', 'gate_edge_draining', 'gate_too_many_sessions'].map((code) => ({ name: `${code} (transient)`, value: variant(error, (v) => ((v.error = code), (v.transient = true))) })),
    { name: 'no details', value: variant(error, (v) => delete v.details) },
    { name: 'an additive member', value: variant(error, (v) => (v.request_id = 'req-1')) },
  ],
  [
    { name: 'an unknown code', value: variant(error, (v) => (v.error = 'gate_teapot')), at: '/error' },
    { name: 'a sidecar-only code', value: variant(error, (v) => (v.error = 'gate_access_denied')), at: '/error' },
    { name: 'a non-transient quorum loss', value: variant(error, (v) => ((v.error = 'gate_quorum_unavailable'), (v.transient = false))), at: '/transient' },
    { name: 'a non-transient drain', value: variant(error, (v) => ((v.error = 'gate_edge_draining'), (v.transient = false))), at: '/transient' },
    { name: 'a non-transient per-caller cap', value: variant(error, (v) => ((v.error = 'gate_too_many_sessions'), (v.transient = false))), at: '/transient' },
    { name: 'a transient bad request', value: variant(error, (v) => ((v.error = 'gate_bad_request'), (v.transient = true))), at: '/transient' },
    { name: 'a missing retry_guidance', value: variant(error, (v) => delete v.retry_guidance), at: '(root)' },
    { name: 'an empty retry_guidance', value: variant(error, (v) => (v.retry_guidance = '')), at: '/retry_guidance' },
    { name: 'a string transient', value: variant(error, (v) => (v.transient = 'no')), at: '/transient' },
    { name: 'a missing message', value: variant(error, (v) => delete v.message), at: '(root)' },
    { name: 'string details', value: variant(error, (v) => (v.details = 'x')), at: '/details' },
  ],
)

const mutation = mutationResponse()
const rejected = { mutation_id: 'mut-2', resource_type: 'capability', resource_id: 'cap-9', outcome: 'rejected', error: { ...error, error: 'gate_forbidden' } }
const quorumError = { error: 'gate_quorum_unavailable', message: 'no quorum', transient: true, retry_guidance: 'retry with backoff' }

checkSchema(
  'gate.hosted.mutation_response.v1',
  [
    { name: 'applied', value: mutation },
    { name: 'unchanged (an idempotent repeat)', value: variant(mutation, (v) => (v.outcome = 'unchanged')) },
    { name: 'rejected with an error', value: rejected },
    {
      name: 'a conflict with the current version',
      value: variant(mutation, (v) => {
        v.outcome = 'conflict'
        delete v.version
        v.expected_version = 2
        v.current_version = 5
        v.error = { ...error, error: 'gate_stale_term' }
      }),
    },
    { name: 'unavailable without quorum', value: { ...rejected, outcome: 'unavailable', error: quorumError } },
    { name: 'a null tenant', value: variant(mutation, (v) => (v.tenant_id = null)) },
  ],
  [
    { name: 'applied without version', value: variant(mutation, (v) => delete v.version), at: '(root)' },
    { name: 'applied with an error', value: variant(mutation, (v) => (v.error = error)), at: '/error' },
    { name: 'rejected without error', value: variant(rejected, (v) => delete v.error), at: '(root)' },
    { name: 'rejected with a version', value: variant(rejected, (v) => (v.version = 1)), at: '/version' },
    { name: 'a conflict without current_version', value: variant(mutation, (v) => ((v.outcome = 'conflict'), (v.error = error))), at: '(root)' },
    {
      name: 'unavailable with a non-transient error',
      value: { ...rejected, outcome: 'unavailable', error: { ...error, error: 'gate_internal_error', transient: false } },
      at: '/error/transient',
    },
    { name: 'an unknown outcome', value: variant(mutation, (v) => (v.outcome = 'ok')), at: '/outcome' },
    { name: 'a capitalised resource type', value: variant(mutation, (v) => (v.resource_type = 'Capability')), at: '/resource_type' },
    { name: 'an uppercase receipt id', value: variant(mutation, (v) => (v.receipt_id = 'A'.repeat(64))), at: '/receipt_id' },
    { name: 'a negative version', value: variant(mutation, (v) => (v.version = -1)), at: '/version' },
    { name: 'a missing mutation_id', value: variant(mutation, (v) => delete v.mutation_id), at: '(root)' },
  ],
)

const binding = tenantBinding()
const SOURCES = ['tenant_token', 'session_admission', 'jwt_claim', 'admin_selection', 'configuration']

checkSchema(
  'gate.hosted.tenant_binding.v1',
  [
    ...SOURCES.map((source) => ({ name: `source ${source}`, value: variant(binding, (v) => (v.source = source)) })),
    { name: 'no key id', value: variant(binding, (v) => delete v.key_id) },
  ],
  [
    { name: 'an unknown source', value: variant(binding, (v) => (v.source = 'header')), at: '/source' },
    { name: 'an empty tenant_id', value: variant(binding, (v) => (v.tenant_id = '')), at: '/tenant_id' },
    { name: 'a missing source', value: variant(binding, (v) => delete v.source), at: '(root)' },
    { name: 'a negative bound_at', value: variant(binding, (v) => (v.bound_at = -5)), at: '/bound_at' },
    { name: 'a credential beside the key id', value: variant(binding, (v) => (v.token = 'secret')), at: '(root)' },
  ],
)

const context = requestContext()
const adminContext = variant(context, (v) => ((v.principal = { role: 'admin', subject: 'service' }), (v.auth_method = 'service_token'), (v.tenant_binding = null)))
const sessionContext = variant(context, (v) => {
  v.principal = { role: 'session', subject: 'jwt-sub-1' }
  v.auth_method = 'session_jwt'
  v.tenant_binding = { ...binding, source: 'jwt_claim', key_id: 'jwks-kid-1' }
  v.session_id = 'sess-0192f0c1'
  v.dpop_jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
})
const peerContext = variant(adminContext, (v) => ((v.principal = { role: 'peer', subject: 'node-b' }), (v.auth_method = 'cluster_peer')))

checkSchema(
  'gate.hosted.authenticated_request_context.v1',
  [
    { name: 'a tenant read token', value: context },
    { name: 'an admin service token, all tenants', value: adminContext },
    {
      name: 'an edge admin token that selected a tenant',
      value: variant(adminContext, (v) => ((v.auth_method = 'edge_admin_token'), (v.tenant_binding = { ...binding, source: 'admin_selection' }))),
    },
    { name: 'a JWT-admitted session with DPoP', value: sessionContext },
    {
      name: 'a bearer-admitted session',
      value: variant(sessionContext, (v) => ((v.auth_method = 'session_bearer'), (v.tenant_binding.source = 'session_admission'), delete v.dpop_jkt)),
    },
    { name: 'a single-tenant session', value: variant(sessionContext, (v) => (v.tenant_binding.source = 'configuration')) },
    { name: 'a cluster peer', value: peerContext },
  ],
  [
    { name: 'a tenant role from the service token', value: variant(context, (v) => (v.auth_method = 'service_token')), at: '/auth_method' },
    { name: 'a tenant role without binding', value: variant(context, (v) => (v.tenant_binding = null)), at: '/tenant_binding' },
    { name: 'a tenant bound by a JWT claim', value: variant(context, (v) => (v.tenant_binding.source = 'jwt_claim')), at: '/tenant_binding/source' },
    { name: 'a peer bound to a tenant', value: variant(peerContext, (v) => (v.tenant_binding = binding)), at: '/tenant_binding' },
    { name: 'a peer using a session token', value: variant(peerContext, (v) => (v.auth_method = 'session_bearer')), at: '/auth_method' },
    { name: 'an admin bound by a tenant token', value: variant(adminContext, (v) => (v.tenant_binding = binding)), at: '/tenant_binding' },
    { name: 'a session bound by a tenant token', value: variant(sessionContext, (v) => (v.tenant_binding.source = 'tenant_token')), at: '/tenant_binding/source' },
    { name: 'an unknown auth method', value: variant(context, (v) => (v.auth_method = 'password')), at: '/auth_method' },
    { name: 'an unknown role', value: variant(context, (v) => (v.principal.role = 'root')), at: '/principal/role' },
    { name: 'a 42-character DPoP thumbprint', value: variant(sessionContext, (v) => (v.dpop_jkt = 'a'.repeat(42))), at: '/dpop_jkt' },
    { name: 'a raw token member', value: variant(context, (v) => (v.token = 'secret')), at: '(root)' },
    { name: 'a principal without subject', value: variant(context, (v) => delete v.principal.subject), at: '/principal' },
    { name: 'a missing tenant_binding', value: variant(adminContext, (v) => delete v.tenant_binding), at: '(root)' },
    { name: 'an invalid session id', value: variant(sessionContext, (v) => (v.session_id = 'has space')), at: '/session_id' },
  ],
)
