// The query map of GateHttpRequest, the capability token carried in `gate_capability`, and the query
// string the app sees once that token is removed (spec 01: the token is a credential, not content).
import { DuplicateQueryKeyError } from '../errors.js'

/** The query parameter that may carry the capability token (spec 01, Authentication). */
export const CAPABILITY_PARAMETER = 'gate_capability'

/** A parsed query string. */
export interface ParsedQuery {
  /** Decoded parameters without `gate_capability`; what `query` and `content_hash` carry. */
  query: Record<string, string>
  /** The decoded `gate_capability` value, when present. */
  capability: string | undefined
  /** The raw query string without the `gate_capability` pair (all else byte-identical), or null when it had none. */
  strippedRawQuery: string | null
}

/** What every request without a query shares (frozen). */
const NO_QUERY: ParsedQuery = Object.freeze({ query: Object.freeze({}), capability: undefined, strippedRawQuery: null })

/** Parses a raw query string (no leading `?`); a key present twice throws DuplicateQueryKeyError (400). */
export function parseQuery(rawQuery: string): ParsedQuery {
  const entries = new Map<string, string>()
  let capability: string | undefined
  let kept: string[] | null = null
  if (rawQuery === '') return NO_QUERY
  const pairs = rawQuery.split('&')
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as string
    if (pair === '') {
      // kept as sent: the rest of the query string stays byte-identical (the proxy forwards it)
      kept?.push(pair)
      continue
    }
    const eq = pair.indexOf('=')
    const key = decodeComponent(eq < 0 ? pair : pair.slice(0, eq))
    const value = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1))
    // decoded keys: `a=1&%61=2` names `a` twice, and the app's parser would see both
    if (entries.has(key) || (key === CAPABILITY_PARAMETER && capability !== undefined)) throw new DuplicateQueryKeyError(key)
    if (key === CAPABILITY_PARAMETER) {
      capability = value
      kept ??= pairs.slice(0, i)
      continue
    }
    entries.set(key, value)
    kept?.push(pair)
  }
  // fromEntries defines own properties, so a `__proto__` key stays data and never becomes a prototype
  return { query: Object.fromEntries(entries), capability, strippedRawQuery: kept === null ? null : kept.join('&') }
}

/** application/x-www-form-urlencoded decoding, as URLSearchParams does it (malformed escapes kept). */
function decodeComponent(s: string): string {
  if (!s.includes('%') && !s.includes('+')) return s
  const spaced = s.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    return new URLSearchParams(`k=${s}`).get('k') ?? spaced
  }
}
