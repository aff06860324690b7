// The Gate headers a client sends through the app to the sidecar: the capability token
// (X-Gate-Capability, or the gate_capability query parameter; the header wins, spec 01), the approval id
// of an approved retry, and the execution nonce id of a strict-nonce retry.
import type { GateRequestInput } from './gate-types.js'
import { InvalidGateHeaderError } from '../errors.js'

/** The Gate headers to pass on to the sidecar. */
export interface GateClientHeaders {
  /** The token as the sidecar will receive it in X-Gate-Capability (base64url when not header-safe). */
  capability: string | undefined
  approvalId: string | undefined
  nonceId: string | undefined
}

const NONCE_ID = /^[0-9a-f]{32}$/
const HEADER_SAFE = /^[\x21-\x7e]+$/

/** Reads the Gate headers; a malformed or ambiguous one throws InvalidGateHeaderError (400). */
export function readGateHeaders(headers: GateRequestInput['headers'], queryCapability: string | undefined): GateClientHeaders {
  const headerToken = single(headers, 'x-gate-capability')
  const token = headerToken ?? queryCapability
  const approvalId = single(headers, 'x-gate-approval-id')
  if (approvalId !== undefined && !HEADER_SAFE.test(approvalId)) throw new InvalidGateHeaderError('x-gate-approval-id', 'is not a printable token')
  const nonceId = single(headers, 'x-gate-execution-nonce')
  // spec 02: a blank or malformed nonce header is a 400 at the sidecar; refuse it here the same way
  if (nonceId !== undefined && !NONCE_ID.test(nonceId)) throw new InvalidGateHeaderError('x-gate-execution-nonce', 'must be the 32 lowercase hex nonce id')
  return { capability: token === undefined ? undefined : toHeaderValue(token.trim()), approvalId, nonceId }
}

function single(headers: GateRequestInput['headers'], name: string): string | undefined {
  const v = headers[name]
  if (v === undefined || typeof v === 'string') return v
  if (v.length === 0) return undefined
  if (v.some(x => x !== v[0])) throw new InvalidGateHeaderError(name, 'is repeated with different values')
  return v[0]
}

/** The sidecar accepts the token's JSON or base64url of it; a query-decoded JSON token may not fit a header. */
function toHeaderValue(token: string): string {
  if (HEADER_SAFE.test(token.replace(/ /g, '!'))) return token
  return base64url(new TextEncoder().encode(token))
}

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
