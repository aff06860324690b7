// The two request hashes of spec 02: `content_hash` binds the request content, `caller_identity_hash`
// the caller. Both are SHA-256 over RFC 8785 canonical JSON.
import type { CallerIdentity } from '../types.js'
import { canonicalJson } from './canonical-json.js'
import { sha256Hex } from './sha256.js'

export interface ContentHashInput {
  method: string
  path: string
  route_pattern: string
  query?: Record<string, string> | null
  body_hash?: string | null
}

/** `content_hash`: SHA-256 of canonical `{body_hash, method, path, query, route_pattern}`. */
export function contentHash(request: ContentHashInput): string {
  // The five members written in their RFC 8785 order (UTF-16 order of the names) instead of building
  // and sorting an object: the same bytes, computed for every request on both sides of the hop.
  const bodyHash = request.body_hash ?? null
  return sha256Hex(
    `{"body_hash":${bodyHash === null ? 'null' : canonicalJson(bodyHash)},"method":${canonicalJson(request.method)},"path":${canonicalJson(request.path)}` +
      // canonical JSON sorts the query parameters; an absent query is the empty map
      `,"query":${request.query === undefined || request.query === null ? '{}' : canonicalJson(request.query)},"route_pattern":${canonicalJson(request.route_pattern)}}`,
  )
}

/**
 * `caller_identity_hash`: SHA-256 of the canonical CallerIdentity. Defaults are filled in first
 * (`verified` false, `tenant` and `agent_id` null) so that an identity written with or without its
 * defaults yields the same hash, as spec 02 requires.
 */
export function callerIdentityHash(identity: CallerIdentity): string {
  return sha256Hex(canonicalJson(normalizeCallerIdentity(identity)))
}

/** The identity with every defaulted field present. */
export function normalizeCallerIdentity(identity: CallerIdentity): Required<CallerIdentity> {
  return {
    subject: identity.subject,
    auth_method: identity.auth_method,
    verified: identity.verified ?? false,
    tenant: identity.tenant ?? null,
    agent_id: identity.agent_id ?? null,
  }
}

/** The anonymous caller (spec 02: subject `anonymous`). */
export const ANONYMOUS_CALLER: CallerIdentity = Object.freeze({
  subject: 'anonymous',
  auth_method: Object.freeze({ method: 'anonymous' as const }),
  verified: false,
  tenant: null,
  agent_id: null,
})
