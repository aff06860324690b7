// Reads a presented capability token: the X-Gate-Capability header or gate_capability query value is
// either the token's JSON or base64url of it (docs/capabilities.md). Nothing is verified here.
import { isJsonReadError, readJson, type CapabilityToken } from '@gate/sdk'

/** Largest token text accepted (a token is normally well under 4 KiB). */
const MAX_TOKEN_CHARS = 64 * 1024

export type ParsedToken = { token: CapabilityToken } | { problem: string }

export function parseCapabilityToken(text: string): ParsedToken {
  const trimmed = text.trim()
  if (trimmed === '') return { problem: 'the capability token is empty' }
  if (trimmed.length > MAX_TOKEN_CHARS) return { problem: 'the capability token is too large' }
  let json = trimmed
  if (!trimmed.startsWith('{')) {
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(trimmed)) return { problem: 'the capability token is neither JSON nor base64url JSON' }
    json = Buffer.from(trimmed, 'base64url').toString('utf8')
  }
  let token: unknown
  try {
    token = readJson(json).value
  } catch (err) {
    if (!isJsonReadError(err)) throw err
    return { problem: err.kind === 'syntax' ? 'the capability token is not valid JSON' : `the capability token is refused: ${err.detail}` }
  }
  if (typeof token !== 'object' || token === null || Array.isArray(token)) return { problem: 'the capability token is not a JSON object' }
  return { token: token as CapabilityToken }
}

/** The header form of a token: base64url of its JSON. */
export function encodeCapabilityToken(token: CapabilityToken): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url')
}
