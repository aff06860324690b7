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
// Other readings an upstream may apply (`;` parameters, `%2F` as a separator, format suffixes) are
// the job of `otherReadings`: the route any of them would reach decides when it is stricter
// (match-route.ts).

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

/** The stems of a last segment with a format suffix cut off that are worth a lookup (RouteIndex). */
export type SuffixStems = (segment: string) => readonly string[]

const NONE: readonly (NormalizedPath | typeof AMBIGUOUS)[] = Object.freeze([])

/**
 * The path as upstreams that normalize further would read it, each distinct reading once:
 *  - `;` path parameters cut off (Tomcat, Jetty, Spring: `/admin;x=1/export` is `/admin/export`);
 *  - a decoded `%2F` taken as a separator (servers that decode before routing);
 *  - both, in either order (cut then decode, as Tomcat and Spring do; decode then cut);
 *  - a format suffix cut off the last segment (Spring's suffix patterns, Rails' `(.:format)`,
 *    JAX-RS extension mappings: `/admin/export.json` is `/admin/export`), of the path as sent and of
 *    each reading above, for the stems `stems` names.
 * A reading whose last segment came out empty reads as a trailing slash (`/admin/export%2F` is
 * `/admin/export/`); one with any other empty or a dot segment (`/pets/..;/admin`, `/a%2F%2Fb`) is
 * AMBIGUOUS, as it would be sent plainly. Letter case is the index's concern.
 */
export function otherReadings(path: NormalizedPath, stems: SuffixStems): readonly (NormalizedPath | typeof AMBIGUOUS)[] {
  let semicolon = false
  let slash = false
  for (const segment of path.segments) {
    if (segment.includes(';')) semicolon = true
    if (segment.includes('/')) slash = true
  }
  const last = path.segments.length === 0 ? '' : path.segments[path.segments.length - 1]!
  if (!semicolon && !slash && !last.includes('.')) return NONE
  const readings: (NormalizedPath | typeof AMBIGUOUS)[] = []
  const seen = new Set<string>()
  const add = (reading: NormalizedPath | typeof AMBIGUOUS) => {
    const key = reading === AMBIGUOUS ? '' : keyOf(reading)
    if (seen.has(key)) return
    seen.add(key)
    readings.push(reading)
  }
  seen.add(keyOf(path))
  if (semicolon) add(settle(path.segments.map(cutParameters), path.trailingSlash))
  if (slash) add(settle(path.segments.flatMap(splitDecoded), path.trailingSlash))
  if (semicolon && slash) {
    add(settle(path.segments.flatMap(s => splitDecoded(cutParameters(s))), path.trailingSlash))
    add(settle(path.segments.flatMap(s => splitDecoded(s).map(cutParameters)), path.trailingSlash))
  }
  const bases = [path, ...readings.filter((r): r is NormalizedPath => r !== AMBIGUOUS)]
  for (const base of bases) {
    const n = base.segments.length
    if (n === 0) continue
    for (const stem of stems(base.segments[n - 1]!)) add({ segments: [...base.segments.slice(0, n - 1), stem], trailingSlash: base.trailingSlash })
  }
  return readings
}

// JSON, not a join: a decoded segment may hold any separator (`%00`, `%2F`)
function keyOf(path: NormalizedPath): string {
  return JSON.stringify([path.trailingSlash, path.segments])
}

function cutParameters(segment: string): string {
  const semicolon = segment.indexOf(';')
  return semicolon === -1 ? segment : segment.slice(0, semicolon)
}

function splitDecoded(segment: string): string[] {
  return segment.includes('/') ? segment.split('/') : [segment]
}

// A reading's segments as a path: a final empty segment is a trailing slash; any other empty segment
// or a dot segment makes it ambiguous (upstreams merge, resolve or keep them).
function settle(segments: string[], trailingSlash: boolean): NormalizedPath | typeof AMBIGUOUS {
  let trailing = trailingSlash
  if (segments.length > 0 && segments[segments.length - 1] === '') {
    if (trailing) return AMBIGUOUS
    segments.pop()
    trailing = true
  }
  for (const segment of segments) if (segment === '' || segment === '.' || segment === '..') return AMBIGUOUS
  return { segments, trailingSlash: trailing }
}
