// The Gate request headers (spec 01, Authentication; spec 02, Errors), read the same way by the SDK
// middleware, `gate api protect` and the sidecar's /gate/evaluate (docs/security.md, "Gate request
// headers"): the capability token (X-Gate-Capability, else the gate_capability query parameter; the
// header wins), the approval id of an approved retry, and the execution nonce id of a strict-nonce
// retry. One rule for all three: a Gate header sent on more than one field line is ambiguous (which
// token, which nonce?) and refused with 400, even when the lines agree; a present one must be non-blank
// and well-formed.
import { InvalidGateHeaderError } from '../errors.js'

/** Request headers with lowercase names, as Node's `req.headers` or a record of Web `Headers`. */
export type GateHeaderSource = Readonly<Record<string, string | readonly string[] | undefined>>

/** The Gate headers of one request. */
export interface GateRequestHeaders {
  /** The capability token text: the header's value, else the query parameter's. */
  capability: string | undefined
  approvalId: string | undefined
  /** The 32 lowercase hex nonce id. */
  nonceId: string | undefined
}

export const CAPABILITY_HEADER = 'x-gate-capability'
export const APPROVAL_ID_HEADER = 'x-gate-approval-id'
export const EXECUTION_NONCE_HEADER = 'x-gate-execution-nonce'

const NONCE_ID = /^[0-9a-f]{32}$/
/** Visible ASCII, no space: an approval id is one token. */
const TOKEN = /^[\x21-\x7e]+$/

/**
 * Reads the Gate headers; a repeated, blank or malformed one throws InvalidGateHeaderError (400
 * gate_bad_request). `rawHeaders` (Node's `req.rawHeaders`: name, value, name, value, ...) shows
 * repeated field lines, which `headers` has already joined with ", "; without it (Web `Headers`, which
 * merge field lines before anyone sees them) a joined value is judged by the value rules alone.
 */
export function readGateHeaders(headers: GateHeaderSource, rawHeaders: readonly string[] | undefined, queryCapability?: string): GateRequestHeaders {
  const capability = single(headers, rawHeaders, CAPABILITY_HEADER)
  const approvalId = single(headers, rawHeaders, APPROVAL_ID_HEADER)
  if (approvalId !== undefined && !TOKEN.test(approvalId)) throw new InvalidGateHeaderError(APPROVAL_ID_HEADER, 'must be one printable token')
  const nonceId = single(headers, rawHeaders, EXECUTION_NONCE_HEADER)
  // spec 02: a blank or malformed nonce header is a 400
  if (nonceId !== undefined && !NONCE_ID.test(nonceId)) throw new InvalidGateHeaderError(EXECUTION_NONCE_HEADER, 'is malformed: expected the 32 lowercase hex nonce id')
  return { capability: capability ?? queryCapability, approvalId, nonceId }
}

/** The header's one value; undefined when absent. */
function single(headers: GateHeaderSource, rawHeaders: readonly string[] | undefined, name: string): string | undefined {
  const raw = headers[name]
  if (raw === undefined) return undefined
  const value = typeof raw === 'string' ? raw : raw.length === 1 ? raw[0] : raw.length === 0 ? undefined : null
  if (value === undefined) return undefined
  // the common request carries no Gate header at all: field lines are counted only when one is there
  if (value === null || (rawHeaders !== undefined && countFieldLines(rawHeaders, name) > 1)) {
    throw new InvalidGateHeaderError(name, 'is repeated: send it once')
  }
  if (value.trim() === '') throw new InvalidGateHeaderError(name, 'is blank')
  return value
}

function countFieldLines(rawHeaders: readonly string[], name: string): number {
  let n = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i] as string
    if (raw.length === name.length && raw.toLowerCase() === name) n++
  }
  return n
}
