// Caller identity from the request's credentials (spec 01, Caller identity; spec 02, CallerIdentity):
// Authorization Bearer, then x-api-key, then the configured cookie, then anonymous. Only SHA-256 hashes
// leave this module; a raw credential is never stored or transmitted.
import { ANONYMOUS_CALLER } from '../protocol/content-hash.js'
import { sha256Hex } from '../protocol/sha256.js'
import type { CallerIdentity } from '../types.js'
import type { GateRequestInput } from './gate-types.js'

type Headers = GateRequestInput['headers']

/** The identity the built-in chain extracts; `identityCookie` null skips the cookie row. */
export function extractCallerIdentity(headers: Headers, identityCookie: string | null): CallerIdentity {
  const bearer = readBearer(single(headers.authorization))
  if (bearer !== undefined) {
    const hash = sha256Hex(bearer)
    return identity(`bearer:${hash}`, `bearer:${hash.slice(0, 16)}`, () => ({ method: 'bearer', token_hash: hash }))
  }
  const apiKey = usable(single(headers['x-api-key']))
  if (apiKey !== undefined) {
    const hash = sha256Hex(apiKey)
    return identity(`apikey:${hash}`, `apikey:${hash.slice(0, 16)}`, () => ({ method: 'api_key', key_name: 'x-api-key', key_hash: hash }))
  }
  if (identityCookie !== null) {
    const value = usable(readCookie(headers.cookie, identityCookie))
    if (value !== undefined) {
      const hash = sha256Hex(value)
      return identity(`cookie:${identityCookie}:${hash}`, `cookie:${hash.slice(0, 16)}`, () => ({ method: 'cookie', cookie_name: identityCookie, cookie_hash: hash }))
    }
  }
  return ANONYMOUS_CALLER
}

/** Identities handed out, by credential hash: a repeat caller gets the same frozen object (hashes only). */
const identities = new Map<string, CallerIdentity>()
const IDENTITY_CACHE_LIMIT = 1024

/** The frozen identity for `key` (method, name and full credential hash), made once. */
function identity(key: string, subject: string, authMethod: () => CallerIdentity['auth_method']): CallerIdentity {
  let found = identities.get(key)
  if (found === undefined) {
    found = Object.freeze({ subject, auth_method: Object.freeze(authMethod()), verified: false, tenant: null, agent_id: null })
    // oldest first out: a Map iterates in insertion order
    if (identities.size >= IDENTITY_CACHE_LIMIT) identities.delete(identities.keys().next().value as string)
    identities.set(key, found)
  }
  return found
}

/** spec 01: an empty credential, one with surrounding whitespace or a control character is ignored. */
function usable(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value !== value.trim() || /[\x00-\x1f\x7f]/.test(value)) return undefined
  return value
}

/** A header's one value; a repeated header is ambiguous and ignored (falls through to the next row). */
function single(value: string | readonly string[] | undefined): string | undefined {
  if (typeof value === 'string') return value
  return value !== undefined && value.length === 1 ? value[0] : undefined
}

function readBearer(header: string | undefined): string | undefined {
  // the auth scheme is case-insensitive (RFC 9110 §11.1); exactly one space separates it from the token
  if (header === undefined || header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  return usable(header.slice(7))
}

function readCookie(header: string | readonly string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  const text = typeof header === 'string' ? header : header.join('; ')
  let found: string | undefined
  for (const part of text.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue
    const value = part.slice(eq + 1).replace(/^ +/, '').replace(/ +$/, '')
    // the same cookie twice with different values: ambiguous, so no cookie identity at all
    if (found !== undefined && found !== value) return undefined
    found = value
  }
  return found
}
