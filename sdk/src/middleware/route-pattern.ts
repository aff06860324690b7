// Route patterns: framework syntax (`/pets/:id`) to the OpenAPI form the sidecar records (`/pets/{id}`),
// and the check that a receipt's pattern can describe the path that was sent.

/** `/pets/:id` → `/pets/{id}`; an OpenAPI pattern is returned unchanged. */
export function toOpenApiPattern(pattern: string): string {
  return pattern.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}')
}

/**
 * True when `pattern` matches `path` segment by segment, a `{param}` standing for one segment (spec 01,
 * route matching); an unmatched request's receipt records the raw path, which matches itself. One
 * trailing slash on either side is ignored, as the sidecar's matcher ignores it (`/pets/` is routed
 * as `/pets`): otherwise a URL with a trailing slash would get a receipt this check refuses. Letter
 * case is ignored, and the path may also be read with `;` parameters dropped and `%2F` as a
 * separator: the sidecar decides a path by the route any of those readings reaches when it is
 * stricter (docs/kernel.md), and names that route.
 */
export function patternMatchesPath(pattern: string, path: string): boolean {
  if (pattern === path) return true
  if (segmentsMatch(pattern, path)) return true
  const other = path.split('/').map(s => {
    const semicolon = s.indexOf(';')
    return (semicolon === -1 ? s : s.slice(0, semicolon)).replace(/%2f/gi, '/')
  }).join('/')
  return other !== path && segmentsMatch(pattern, other)
}

function segmentsMatch(pattern: string, path: string): boolean {
  const ps = withoutTrailingSlash(pattern).split('/')
  const xs = withoutTrailingSlash(path).split('/')
  if (ps.length !== xs.length) return false
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i] as string
    const x = xs[i] as string
    if (p === x) continue
    if (!p.includes('{')) {
      if (safeDecode(p).toLowerCase() !== safeDecode(x).toLowerCase()) return false
      continue
    }
    const re = new RegExp('^' + p.split(/\{[^}/]*\}/).map(escapeRegExp).join('[^/]+') + '$', 'i')
    if (!re.test(x) && !re.test(safeDecode(x))) return false
  }
  return true
}

function withoutTrailingSlash(s: string): string {
  return s.length > 1 && s.endsWith('/') ? s.slice(0, -1) : s
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
