// How a request path is read for route matching, chosen so that no path can borrow the policy of a
// route it does not reach:
//  - the query string and fragment are cut off; the rest is the raw path recorded when unmatched;
//  - one trailing slash is ignored (`/pets/` matches `/pets`), as most servers route them alike;
//  - segments are compared percent-decoded; `%2F` stays inside its segment (a `{param}` value may
//    hold a slash, as GitLab's `projects/group%2Fname` does) and literals are decoded the same way;
//  - a path is *ambiguous* when it has an empty segment (`/pets//x`, `//admin`), a dot segment
//    (`.`, `..`, also encoded as `%2e`), a backslash (raw or `%5C`; WHATWG URL parsing turns `\`
//    into `/`), or malformed percent-encoding. Upstreams disagree on what such paths mean (merge
//    slashes, resolve `..`, or neither), so an ambiguous path matches no route and is DenyByDefault
//    whatever the method.
// Other readings an upstream may apply are the job of `otherReadings`: the route they would reach
// decides when it is stricter (match-route.ts).

/** A request path split into decoded segments. */
export interface NormalizedPath {
  segments: string[]
  trailingSlash: boolean
}

export const AMBIGUOUS = Symbol('ambiguous')

/** Splits a raw request path into decoded segments; null when it is not an origin-form path. */
export function normalizeRequestPath(raw: string): NormalizedPath | null | typeof AMBIGUOUS {
  if (raw.charCodeAt(0) !== 0x2f /* / */) return null
  if (raw.length === 1) return { segments: [], trailingSlash: false }
  const trailingSlash = raw.charCodeAt(raw.length - 1) === 0x2f
  const segments = raw.slice(1, trailingSlash ? -1 : undefined).split('/')
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i]!
    if (segment === '' || segment.includes('\\')) return AMBIGUOUS
    if (segment.includes('%')) {
      try {
        segment = decodeURIComponent(segment)
      } catch {
        return AMBIGUOUS
      }
      if (segment.includes('\\')) return AMBIGUOUS
      segments[i] = segment
    }
    if (segment === '.' || segment === '..') return AMBIGUOUS
  }
  return { segments, trailingSlash }
}

/** The path without its query string and fragment. */
export function stripQuery(path: string): string {
  let end = path.length
  const query = path.indexOf('?')
  if (query !== -1) end = query
  const fragment = path.indexOf('#')
  if (fragment !== -1 && fragment < end) end = fragment
  return end === path.length ? path : path.slice(0, end)
}

/**
 * The path as upstreams that normalize further would read it: `;` path parameters dropped (Tomcat,
 * Spring, Jetty: `/admin;x=1/export` is `/admin/export`) and a decoded `%2F` taken as a separator
 * (servers that decode before routing). Undefined when neither applies. Letter case is the index's
 * concern (RouteIndex.caseSensitive).
 */
export function otherReadings(path: NormalizedPath): NormalizedPath | undefined {
  let changed = false
  const segments: string[] = []
  for (const segment of path.segments) {
    const semicolon = segment.indexOf(';')
    const kept = semicolon === -1 ? segment : segment.slice(0, semicolon)
    if (kept.includes('/')) {
      segments.push(...kept.split('/'))
      changed = true
    } else {
      segments.push(kept)
      if (semicolon !== -1) changed = true
    }
  }
  return changed ? { segments, trailingSlash: path.trailingSlash } : undefined
}
