// Valid example values for every schema, built fresh on each call so tests can mutate copies.
// Keys, hashes and signatures are well-formed hex of the right sizes, not real cryptographic values.

/** A JSON object example that tests may reshape freely. */
export type Example = Record<string, any>

/** Lowercase hex of `length` characters, varied by `seed`. */
export function hex(length: number, seed = 0): string {
  const digits = '0123456789abcdef'
  let out = ''
  for (let i = 0; i < length; i++) out += digits[(i * 7 + seed) % 16]
  return out
}

/** A deep copy of `base` changed by `change`. */
export function variant(base: Example, change: (value: Example) => void): Example {
  const copy = structuredClone(base)
  change(copy)
  return copy
}

export const SHA256 = hex(64, 1)
export const ED25519_KEY = hex(64, 2)
export const P256_KEY = `p256:04${hex(128, 3)}`
export const P384_KEY = `p384:04${hex(192, 4)}`
export const ED25519_SIGNATURE = hex(128, 5)
/** DER SEQUENCE (30) of 71 bytes in all: within P-256's 8..72. */
export const P256_SIGNATURE = `p256:30${hex(140, 6)}`
/** DER SEQUENCE of 103 bytes in all: within P-384's 8..104. */
export const P384_SIGNATURE = `p384:30${hex(204, 7)}`
/** ML-DSA-65 sizes: public key 1952 bytes, signature 3309 bytes. */
export const MLDSA65_KEY_HEX = hex(3904, 8)
export const MLDSA65_SIGNATURE_HEX = hex(6618, 9)
export const HYBRID_ED25519_KEY = `hybrid:${hex(64, 10)}:${MLDSA65_KEY_HEX}:ed25519+mldsa65`
export const HYBRID_P256_KEY = `hybrid:04${hex(128, 11)}:${MLDSA65_KEY_HEX}:p256+mldsa65`
export const HYBRID_P384_KEY = `hybrid:04${hex(192, 12)}:${MLDSA65_KEY_HEX}:p384+mldsa65`
export const HYBRID_ED25519_SIGNATURE = `hybrid:${hex(128, 13)}:${MLDSA65_SIGNATURE_HEX}:ed25519+mldsa65`
export const HYBRID_P256_SIGNATURE = `hybrid:30${hex(140, 14)}:${MLDSA65_SIGNATURE_HEX}:p256+mldsa65`
export const HYBRID_P384_SIGNATURE = `hybrid:30${hex(204, 15)}:${MLDSA65_SIGNATURE_HEX}:p384+mldsa65`

export function callerIdentity(): Example {
  return {
    subject: 'user-42',
    auth_method: { method: 'bearer', token_hash: hex(64, 20) },
    verified: true,
    tenant: 'acme',
    agent_id: null,
  }
}

export function executionNonce(): Example {
  return {
    schema: 'gate.execution_nonce.v1',
    nonce_id: 'nonce-0192f0c1',
    request_id: '0192f0c1-7d2e-7b3a-9c4d-5e6f70819203',
    caller_identity_hash: hex(64, 21),
    method: 'POST',
    route_pattern: '/pets/{id}',
    content_hash: hex(64, 22),
    issued_at: 1_735_689_600,
    expires_at: 1_735_689_660,
    kernel_key: ED25519_KEY,
    signature: ED25519_SIGNATURE,
  }
}

export function httpRequest(): Example {
  return {
    request_id: '0192f0c1-7d2e-7b3a-9c4d-5e6f70819203',
    method: 'POST',
    route_pattern: '/pets/{id}',
    path: '/pets/7',
    query: { expand: 'owner' },
    headers: { 'content-type': 'application/json', 'x-request-id': 'abc' },
    caller: callerIdentity(),
    body_hash: hex(64, 23),
    body_length: 17,
    session_id: null,
    capability_id: 'cap-7',
    timestamp: 1_735_689_600,
  }
}

export function minimalHttpRequest(): Example {
  return {
    request_id: 'r-1',
    method: 'GET',
    route_pattern: '/pets',
    path: '/pets',
    caller: { subject: 'anonymous', auth_method: { method: 'anonymous' } },
    timestamp: 0,
  }
}

export function denyVerdict(): Example {
  return {
    verdict: 'deny',
    reason: 'no capability presented for POST /pets/{id}',
    guard: 'CapabilityGuard',
    http_status: 403,
    details: { requested_action: 'POST /pets/{id}', granted_scope: null, reason_code: 'capability_missing' },
  }
}

export function guardEvidence(): Example {
  return { guard_name: 'CapabilityGuard', verdict: true, details: 'capability cap-7 grants POST /pets/{id}' }
}

export function httpReceipt(): Example {
  return {
    id: hex(64, 24),
    request_id: '0192f0c1-7d2e-7b3a-9c4d-5e6f70819203',
    route_pattern: '/pets/{id}',
    method: 'POST',
    caller_identity_hash: hex(64, 25),
    session_id: null,
    verdict: { verdict: 'allow' },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'caller_executed',
    redaction_mode: 'none',
    evidence: [guardEvidence()],
    response_status: 200,
    timestamp: 1_735_689_600,
    content_hash: hex(64, 26),
    policy_hash: hex(64, 27),
    trust_level: 'mediated',
    capability_id: 'cap-7',
    metadata: null,
    kernel_key: ED25519_KEY,
    signature: ED25519_SIGNATURE,
  }
}

export function evaluateResponse(): Example {
  return { verdict: { verdict: 'allow' }, receipt: httpReceipt(), evidence: [guardEvidence()] }
}

/** A core receipt mapped from an HTTP receipt (spec 02, Core receipt mapping). */
export function coreReceipt(): Example {
  return {
    id: hex(64, 28),
    timestamp: 1_735_689_600,
    capability_id: '',
    tool_server: 'http',
    tool_name: 'POST /pets/{id}',
    action: {
      parameters: { method: 'POST', route: '/pets/{id}', request_id: 'r-1' },
      parameter_hash: hex(64, 29),
    },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'caller_executed',
    redaction_mode: 'none',
    decision: { verdict: 'allow' },
    content_hash: hex(64, 30),
    policy_hash: hex(64, 31),
    evidence: [guardEvidence()],
    metadata: null,
    trust_level: 'mediated',
    tenant_id: null,
    bbs_projection_version: null,
    kernel_key: ED25519_KEY,
    signature: ED25519_SIGNATURE,
  }
}

export function traceReceipt(): Example {
  return variant(coreReceipt(), (receipt) => {
    receipt.receipt_kind = 'trace_observation'
    receipt.boundary_class = 'detect_only'
    receipt.trust_level = 'verified'
    receipt.observation_outcome = 'observed_success'
    delete receipt.decision
  })
}

export function advisoryReceipt(): Example {
  return variant(coreReceipt(), (receipt) => {
    receipt.receipt_kind = 'advisory_evaluation'
    receipt.boundary_class = 'advisory_only'
    receipt.trust_level = 'advisory'
    receipt.observation_outcome = 'would_deny'
    delete receipt.decision
  })
}

export function toolGrant(): Example {
  return {
    server_id: 'pets-api',
    tool_name: 'updatePet',
    operations: ['invoke'],
    constraints: [{ require_approval_above: { threshold_units: 5000 } }],
    max_invocations: 10,
    max_cost_per_invocation: { units: 250, currency: 'USD' },
    max_total_cost: null,
    dpop_required: false,
  }
}

export function capability(): Example {
  return {
    schema: 'gate.capability.v1',
    id: 'cap-7',
    issuer: ED25519_KEY,
    subject: hex(64, 32),
    scope: { grants: [toolGrant()], resource_grants: [], prompt_grants: [] },
    issued_at: 1_735_689_600,
    expires_at: 1_735_693_200,
    delegation_chain: [
      {
        capability_id: 'cap-1',
        delegator: hex(64, 33),
        delegatee: hex(64, 32),
        scope_hash: hex(64, 34),
        timestamp: 1_735_689_500,
        signature: hex(128, 35),
      },
    ],
    aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 100, root_binding: 'cap-1' },
    algorithm: 'ed25519',
    caveats: [{ kind: 'time_window', predicate: { not_after: 1_735_693_200 } }],
    scope_attenuations: [{ removed: 'deletePet' }],
    attenuation_proof: { parentScopeHash: hex(64, 36), childScopeHash: hex(64, 37), normalizedSubsetProof: ['updatePet'] },
    budget_share_bps: 2500,
    signature: ED25519_SIGNATURE,
  }
}

export function minimalCapability(): Example {
  return {
    id: 'cap-min',
    issuer: ED25519_KEY,
    subject: hex(64, 38),
    scope: { grants: [{ server_id: 'pets-api', tool_name: 'listPets' }] },
    issued_at: 1,
    expires_at: 2,
    signature: ED25519_SIGNATURE,
  }
}

export function toolDefinition(): Example {
  return {
    name: 'updatePet',
    description: 'Update a pet',
    input_schema: {
      type: 'object',
      properties: { id: { type: 'string' }, body: { $ref: '#/components/schemas/Pet' } },
      required: ['id'],
    },
    output_schema: { type: 'object', properties: { id: { type: 'string' } } },
    annotations: { read_only: false, destructive: false, idempotent: true, requires_approval: false },
  }
}

export function manifest(): Example {
  return {
    schema: 'gate.manifest.v1',
    server_id: 'openapi-server',
    name: 'Pets API',
    version: '1.0.0',
    description: 'Generated from petstore.yaml',
    protocol_version: '1.0',
    policy_hash: hex(64, 39),
    tools: [toolDefinition()],
  }
}

export function sessionInitRequest(): Example {
  return {
    kind: 'request',
    protocol_version: '2025-11-25',
    caller: callerIdentity(),
    capability_ids: ['cap-7', 'cap-8'],
    client_info: { name: 'agent-cli', version: '0.3.1', title: 'Agent CLI' },
  }
}

export function sessionInitResult(): Example {
  return {
    kind: 'result',
    session_id: 'sess-0192f0c1',
    protocol_version: '2025-11-25',
    state: 'initializing',
    created_at: 1_735_689_600,
    expires_at: 1_735_693_200,
  }
}

export function sessionResumeRequest(): Example {
  return { kind: 'request', session_id: 'sess-0192f0c1', last_event_id: 'sess-0192f0c1-41' }
}

export function sessionResumeResult(): Example {
  return { kind: 'result', session_id: 'sess-0192f0c1', state: 'ready', resumed: true, next_event_id: 'sess-0192f0c1-42' }
}

export function toolCallResponse(): Example {
  return { type: 'tool_call_response', id: 'call-1', result: { status: 'ok', value: { pets: [] } }, receipt: coreReceipt() }
}

export function domainEvent(): Example {
  return {
    schema: 'gate.hosted.domain_event_envelope.v1',
    event_id: 'evt-2',
    tenant_id: 'acme',
    sequence: 2,
    event_type: 'capability.revoked',
    occurred_at: 1_735_689_600,
    payload: { capability_id: 'cap-7' },
    prev_event_hash: hex(64, 40),
    event_hash: hex(64, 41),
  }
}

export function hostedError(): Example {
  return {
    error: 'gate_session_not_found',
    message: 'unknown MCP-Session-Id',
    details: { session_id: 'sess-x' },
    transient: false,
    retry_guidance: 'run initialize to open a new session',
  }
}

export function tenantBinding(): Example {
  return { tenant_id: 'acme', source: 'tenant_token', bound_at: 1_735_689_600, key_id: 'tok-acme-1' }
}

export function requestContext(): Example {
  return {
    request_id: 'req-9',
    principal: { role: 'tenant', subject: 'tok-acme-1' },
    auth_method: 'tenant_token',
    tenant_binding: tenantBinding(),
    issued_at: 1_735_689_600,
    expires_at: 1_735_689_900,
  }
}

export function mutationResponse(): Example {
  return {
    mutation_id: 'mut-1',
    tenant_id: 'acme',
    resource_type: 'revocation',
    resource_id: 'cap-7',
    outcome: 'applied',
    version: 3,
    term: 4,
    receipt_id: hex(64, 42),
  }
}

export function verifyResponse(): Example {
  return {
    signature_valid: true,
    signer_trusted: true,
    receipt_id_valid: true,
    parameter_hash_valid: true,
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    trust_level: 'mediated',
    result: 'allow',
    authorized: true,
    signer_key_hex: ED25519_KEY,
    ok: true,
  }
}

export function health(): Example {
  return {
    status: 'healthy',
    version: '0.1.0',
    receipt_backend: 'durable',
    revocation_backend: 'durable',
    kernel_key: ED25519_KEY,
  }
}

export function errorBody(): Example {
  return {
    error: 'gate_access_denied',
    message: 'no capability presented for POST /pets/{id}',
    receipt_id: hex(64, 43),
    suggestion: 'present a capability in X-Gate-Capability',
  }
}
