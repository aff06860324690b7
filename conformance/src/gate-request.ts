// GateHttpRequests the checks send (spec 02, GateHttpRequest) and the callers they carry.
import { ANONYMOUS_CALLER, sha256Hex, uuidv7, type CallerIdentity, type GateHttpRequest, type HttpMethod } from '@gate/sdk'

/** The anonymous identity, every field written. */
export { ANONYMOUS_CALLER }

/** A bearer caller as the proxy derives it (spec 01, Caller identity), every field written. */
export function bearerCaller(token: string): CallerIdentity {
  const hash = sha256Hex(token)
  return { subject: `bearer:${hash.slice(0, 16)}`, auth_method: { method: 'bearer', token_hash: hash }, verified: false, tenant: null, agent_id: null }
}

/** One caller of each AuthMethod tag (spec 02, AuthMethod), every field written. */
export function callersOfEveryKind(): CallerIdentity[] {
  const h = (s: string) => sha256Hex(s)
  return [
    ANONYMOUS_CALLER,
    bearerCaller('conformance-bearer-token'),
    { subject: `apikey:${h('k').slice(0, 16)}`, auth_method: { method: 'api_key', key_name: 'x-api-key', key_hash: h('k') }, verified: false, tenant: 'tenant-a', agent_id: null },
    { subject: 'cookie-user', auth_method: { method: 'cookie', cookie_name: 'sid', cookie_hash: h('cookie') }, verified: true, tenant: null, agent_id: 'agent-7' },
    { subject: 'CN=client', auth_method: { method: 'mtls_certificate', subject_dn: 'CN=client,O=Conformance', fingerprint: h('cert') }, verified: true, tenant: 't', agent_id: 'a' },
  ]
}

export interface RequestInit {
  method: HttpMethod
  path: string
  query?: Record<string, string>
  /** Body text; its SHA-256 and UTF-8 length go into body_hash and body_length. */
  body?: string | null
  caller?: CallerIdentity
  /** What the client claims; the sidecar must re-match (default: the path). */
  routePattern?: string
  sessionId?: string | null
  capabilityId?: string | null
  /** Extra members (sidecar-only fields). */
  extra?: Record<string, unknown>
}

/** Builds a valid GateHttpRequest with a fresh UUIDv7 request id. */
export function buildRequest(init: RequestInit): GateHttpRequest {
  const request: GateHttpRequest = {
    request_id: uuidv7(),
    method: init.method,
    route_pattern: init.routePattern ?? init.path,
    path: init.path,
    caller: init.caller ?? ANONYMOUS_CALLER,
    timestamp: Math.floor(Date.now() / 1000),
  }
  if (init.query !== undefined && Object.keys(init.query).length > 0) request.query = init.query
  if (init.body !== undefined && init.body !== null) {
    request.body_hash = sha256Hex(init.body)
    request.body_length = Buffer.byteLength(init.body)
  }
  if (init.sessionId !== undefined) request.session_id = init.sessionId
  if (init.capabilityId !== undefined) request.capability_id = init.capabilityId
  return init.extra === undefined ? request : ({ ...request, ...init.extra } as GateHttpRequest)
}
