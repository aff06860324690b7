// The Gate headers of a proxied request (spec 01, Authentication; spec 02, Errors): the capability
// token (X-Gate-Capability, else the gate_capability query parameter; the header wins), the approval id
// of an approved retry, and the execution nonce of a strict-nonce retry.
import type { IncomingHttpHeaders } from 'node:http'
import { BadRequestError } from '@gate/sdk'

export interface GateRequestHeaders {
  capability: string | undefined
  approvalId: string | undefined
  nonceId: string | undefined
}

const NONCE_ID = /^[0-9a-f]{32}$/

/** Reads the Gate headers; a blank or malformed execution nonce is a 400 gate_bad_request. */
export function readGateHeaders(headers: IncomingHttpHeaders, queryCapability: string | undefined): GateRequestHeaders {
  const header = headers['x-gate-capability']
  const approvalId = headers['x-gate-approval-id']
  const raw = headers['x-gate-execution-nonce']
  const nonce = Array.isArray(raw) ? raw.join(', ') : raw
  let nonceId: string | undefined
  if (nonce !== undefined) {
    // node joins a repeated header with ", ", which the pattern below refuses: one nonce per request
    if (nonce.trim() === '') throw new BadRequestError('x-gate-execution-nonce header is blank')
    if (!NONCE_ID.test(nonce)) throw new BadRequestError('x-gate-execution-nonce header is malformed: expected the 32 lowercase hex nonce id')
    nonceId = nonce
  }
  return {
    capability: typeof header === 'string' ? header : queryCapability,
    approvalId: typeof approvalId === 'string' && approvalId !== '' ? approvalId : undefined,
    nonceId,
  }
}
