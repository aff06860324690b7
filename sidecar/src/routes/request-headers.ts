// Reading Gate's request headers strictly: a header repeated with different values is ambiguous and
// refused, and the execution-nonce header has one exact form (spec 02: blank or malformed → 400).
import type { IncomingMessage } from 'node:http'
import { BadRequestError } from '@gate/sdk'

const NONCE_ID = /^[0-9a-f]{32}$/

/** A header's single value; undefined when absent. */
export function readSingleHeader(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  if (v === undefined) return undefined
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined
    if (v.some(x => x !== v[0])) throw new BadRequestError(`header ${name} is repeated with different values`)
    return v[0]
  }
  return v
}

/** The `x-gate-execution-nonce` header: absent, or exactly 32 lowercase hex characters. */
export function readNonceHeader(req: IncomingMessage): string | undefined {
  const raw = req.headers['x-gate-execution-nonce']
  if (raw === undefined) return undefined
  const value = Array.isArray(raw) ? raw.join(',') : raw
  if (value.trim() === '') throw new BadRequestError('x-gate-execution-nonce header is blank')
  if (!NONCE_ID.test(value)) throw new BadRequestError('x-gate-execution-nonce header is malformed: expected the 32-hex nonce id')
  return value
}
