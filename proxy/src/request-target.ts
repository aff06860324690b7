// The request target of a proxied request, read from the raw `req.url` (never a WHATWG-normalized URL:
// the route matcher must see `..`, `//` and `%2e` as sent, and the upstream must receive the same
// bytes). Yields the path, the decoded query map of GateHttpRequest, the `gate_capability` token, and
// the query string to forward: byte-identical, order kept, only the `gate_capability` pair removed.
import { CAPABILITY_PARAMETER, parseQuery, TargetNotOriginFormError } from '@gate/sdk'

export { CAPABILITY_PARAMETER }

export interface RequestTarget {
  /** The raw path, as sent. */
  path: string
  /** Decoded parameters without `gate_capability`; undefined when there are none (omitted from the wire). */
  query: Record<string, string> | undefined
  /** The decoded `gate_capability` value, when present. */
  capability: string | undefined
  /** What follows the path upstream: '' or '?' plus the raw query without the `gate_capability` pair. */
  forwardSearch: string
}

/** Parses `req.url`; a non-origin-form target or a repeated query key is a 400 gate_bad_request. */
export function parseRequestTarget(rawUrl: string): RequestTarget {
  if (rawUrl.charCodeAt(0) !== 0x2f /* '/' */) throw new TargetNotOriginFormError(rawUrl)
  const q = rawUrl.indexOf('?')
  if (q < 0) return { path: rawUrl, query: undefined, capability: undefined, forwardSearch: '' }
  const path = rawUrl.slice(0, q)
  const rawQuery = rawUrl.slice(q + 1)
  if (rawQuery === '') return { path, query: undefined, capability: undefined, forwardSearch: '?' }
  const parsed = parseQuery(rawQuery)
  const stripped = parsed.strippedRawQuery
  const forwardSearch = stripped === null ? `?${rawQuery}` : stripped === '' ? '' : `?${stripped}`
  const query = Object.keys(parsed.query).length === 0 ? undefined : parsed.query
  return { path, query, capability: parsed.capability, forwardSearch }
}
