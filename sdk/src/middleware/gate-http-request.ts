// The one GateHttpRequest builder (spec 02, GateHttpRequest), used by the SDK middleware core and by
// `gate api protect`: a fresh UUIDv7 request id, the body's SHA-256, the receive time, and the
// optional members left off the wire when empty.
import { sha256Hex } from '../protocol/sha256.js'
import { uuidv7 } from '../protocol/request-id.js'
import type { CallerIdentity, GateHttpRequest, HttpMethod } from '../types.js'

/** What the caller read from the request; everything else is derived here. */
export interface GateHttpRequestParts {
  method: HttpMethod
  /** The request path as received (origin-form). */
  path: string
  /** The pattern the caller matched; the sidecar re-matches `path` against its own routes anyway. */
  routePattern: string
  caller: CallerIdentity
  /** The body bytes; null or empty for a bodyless request (`body_hash` null, `body_length` 0). */
  body: Uint8Array | null
  /** Decoded query parameters without `gate_capability`; omitted from the wire when empty. */
  query?: Record<string, string> | undefined
  /** Selected, credential-free headers; omitted from the wire when empty. */
  headers?: Record<string, string> | undefined
}

/** Builds the GateHttpRequest of one request. */
export function buildGateHttpRequest(parts: GateHttpRequestParts): GateHttpRequest {
  const { body } = parts
  const hasBody = body !== null && body.length > 0
  const request: GateHttpRequest = {
    request_id: uuidv7(),
    method: parts.method,
    route_pattern: parts.routePattern,
    path: parts.path,
    caller: parts.caller,
    body_hash: hasBody ? sha256Hex(body) : null,
    body_length: hasBody ? body.length : 0,
    timestamp: Math.floor(Date.now() / 1000),
  }
  if (parts.query !== undefined && hasMembers(parts.query)) request.query = parts.query
  if (parts.headers !== undefined && hasMembers(parts.headers)) request.headers = parts.headers
  return request
}

function hasMembers(record: Record<string, string>): boolean {
  for (const _ in record) return true
  return false
}
