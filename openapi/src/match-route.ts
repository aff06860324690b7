// Request → route matching for the kernel, called once per request. The table is indexed once into
// one segment trie per method, so a lookup is a split, a few Map gets and no regex compilation.
//
// Precedence (spec 01 plus the OpenAPI rule): segments are compared one by one; a `{param}` segment
// matches exactly one non-empty segment. When several patterns match, the one with a literal segment
// at the first position where they differ wins (literal > mixed template such as `{id}.json` >
// whole-segment template), i.e. a depth-first search that tries literals first. Remaining ties
// (`/pets/{id}` vs `/pets/{petId}`) go to the pattern whose trailing slash agrees with the request,
// then to the smaller pattern in code point order.
//
// Request path normalization, chosen so that no path can borrow the policy of a route it does not
// reach:
//  - the query string and fragment are cut off; the rest is the raw path recorded when unmatched;
//  - one trailing slash is ignored (`/pets/` matches `/pets`), as most servers route them alike;
//  - segments are compared percent-decoded; `%2F` stays inside its segment (a `{param}` value may
//    hold a slash, as GitLab's `projects/group%2Fname` does) and literals are decoded the same way;
//  - a path is *ambiguous* when it has an empty segment (`/pets//x`, `//admin`), a dot segment
//    (`.`, `..`, also encoded as `%2e`), a backslash (raw or `%5C`; WHATWG URL parsing turns `\`
//    into `/`), or malformed percent-encoding. Upstreams disagree on what such paths mean (merge
//    slashes, resolve `..`, or neither), so an ambiguous path matches no route and is DenyByDefault
//    whatever the method (why `ambiguous_path`): a GET of `/pets/%2e%2e/admin` needs a capability
//    instead of riding the method rule past the policy of `/admin` or `/pets/{id}/admin`;
//  - matching is case-sensitive (RFC 3986, OpenAPI). An upstream that routes case-insensitively
//    (Express's default) should be configured case-sensitive behind the proxy;
//  - methods are compared exactly; a method outside the table falls back to the method rule, and
//    one outside GET/HEAD/OPTIONS is DenyByDefault.
import { classifyMethod } from './classify-policy.js'
import { compareCodePoints } from './extract-operations.js'
import type { RouteEntry, RouteMatch } from './types.js'

/** A route table: its rows in path then method order, and the index `matchRoute` searches. */
export interface RouteTable {
  readonly routes: readonly RouteEntry[]
  readonly index: RouteIndex
}

type Slot = { index: number; name: string; regex?: undefined } | { index: number; regex: RegExp; names: string[] }

interface CompiledRoute {
  entry: RouteEntry
  trailingSlash: boolean
  slots: Slot[]
}

interface MixedEdge {
  segment: string
  regex: RegExp
  literalChars: number
  node: TrieNode
}

interface TrieNode {
  literal: Map<string, TrieNode> | null
  mixed: MixedEdge[] | null
  param: TrieNode | null
  routes: CompiledRoute[] | null
}

const WHOLE_PARAM = /^\{([^{}]+)\}$/
const PARAM_IN_SEGMENT = /\{([^{}]+)\}/g

/** Builds a route table (and its index) from route rows. */
export function createRouteTable(routes: readonly RouteEntry[]): RouteTable {
  const frozen = Object.freeze(routes.map(route => Object.freeze({ ...route })))
  return Object.freeze({ routes: frozen, index: new RouteIndex(frozen) })
}

/** Segment tries per method over a fixed set of routes. */
export class RouteIndex {
  private readonly methods = new Map<string, TrieNode>()

  constructor(routes: readonly RouteEntry[]) {
    for (const entry of routes) this.insert(entry)
    for (const root of this.methods.values()) finish(root)
  }

  /** The best route for already normalized segments, or undefined. */
  find(method: string, segments: readonly string[], trailingSlash: boolean): CompiledRoute | undefined {
    const root = this.methods.get(method)
    if (root === undefined) return undefined
    const routes = search(root, segments, 0)
    if (routes === null) return undefined
    for (const route of routes) if (route.trailingSlash === trailingSlash) return route
    return routes[0]
  }

  private insert(entry: RouteEntry): void {
    let node = this.methods.get(entry.method)
    if (node === undefined) {
      node = emptyNode()
      this.methods.set(entry.method, node)
    }
    const { segments, trailingSlash } = splitPattern(entry.pattern)
    const slots: Slot[] = []
    segments.forEach((segment, index) => {
      const whole = WHOLE_PARAM.exec(segment)
      if (whole !== null) {
        slots.push({ index, name: whole[1]! })
        node!.param ??= emptyNode()
        node = node!.param
        return
      }
      if (segment.includes('{') && /\{[^{}]+\}/.test(segment)) {
        const names: string[] = []
        let literalChars = 0
        let source = '^'
        let last = 0
        for (const m of segment.matchAll(PARAM_IN_SEGMENT)) {
          const literal = decodeLiteral(segment.slice(last, m.index))
          literalChars += literal.length
          source += escapeRegex(literal) + '(.+?)'
          names.push(m[1]!)
          last = m.index + m[0].length
        }
        const tail = decodeLiteral(segment.slice(last))
        literalChars += tail.length
        const regex = new RegExp(source + escapeRegex(tail) + '$', 's')
        slots.push({ index, regex, names })
        node!.mixed ??= []
        let edge = node!.mixed.find(e => e.segment === segment)
        if (edge === undefined) {
          edge = { segment, regex, literalChars, node: emptyNode() }
          node!.mixed.push(edge)
        }
        node = edge.node
        return
      }
      node!.literal ??= new Map()
      const key = decodeLiteral(segment)
      let next = node!.literal.get(key)
      if (next === undefined) {
        next = emptyNode()
        node!.literal.set(key, next)
      }
      node = next
    })
    node.routes ??= []
    node.routes.push({ entry, trailingSlash, slots })
  }
}

/**
 * Matches a request against the table. An unmatched path gets the method rule and its raw path as
 * `pattern`; an ambiguous path (see the module comment) is DenyByDefault.
 */
export function matchRoute(table: RouteTable, method: string, path: string): RouteMatch {
  const raw = stripQuery(path)
  const normalized = normalizeRequestPath(raw)
  if (normalized === AMBIGUOUS) return { matched: false, pattern: raw, decision: 'DenyByDefault', why: 'ambiguous_path' }
  const route = normalized === null ? undefined : table.index.find(method, normalized.segments, normalized.trailingSlash)
  if (route === undefined) return { matched: false, pattern: raw, decision: classifyMethod(method), why: 'method' }
  const { entry } = route
  return {
    matched: true,
    pattern: entry.pattern,
    route: entry,
    decision: entry.decision,
    why: entry.why,
    params: readParams(route, normalized!.segments),
  }
}

const AMBIGUOUS = Symbol('ambiguous')

interface NormalizedPath {
  segments: string[]
  trailingSlash: boolean
}

/** Splits a raw request path into decoded segments; null when it is not an origin-form path. */
function normalizeRequestPath(raw: string): NormalizedPath | null | typeof AMBIGUOUS {
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

function stripQuery(path: string): string {
  let end = path.length
  const query = path.indexOf('?')
  if (query !== -1) end = query
  const fragment = path.indexOf('#')
  if (fragment !== -1 && fragment < end) end = fragment
  return end === path.length ? path : path.slice(0, end)
}

// Depth-first, literal before mixed before param: the first complete match is the most specific.
function search(node: TrieNode, segments: readonly string[], i: number): CompiledRoute[] | null {
  if (i === segments.length) return node.routes
  const segment = segments[i]!
  if (node.literal !== null) {
    const next = node.literal.get(segment)
    if (next !== undefined) {
      const found = search(next, segments, i + 1)
      if (found !== null) return found
    }
  }
  if (node.mixed !== null) {
    for (const edge of node.mixed) {
      if (!edge.regex.test(segment)) continue
      const found = search(edge.node, segments, i + 1)
      if (found !== null) return found
    }
  }
  if (node.param !== null && segment !== '') return search(node.param, segments, i + 1)
  return null
}

function readParams(route: CompiledRoute, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = Object.create(null) as Record<string, string>
  for (const slot of route.slots) {
    const segment = segments[slot.index]!
    if (slot.regex === undefined) {
      params[slot.name] = segment
      continue
    }
    const m = slot.regex.exec(segment)
    if (m !== null) slot.names.forEach((name, k) => (params[name] = m[k + 1]!))
  }
  return params
}

function splitPattern(pattern: string): NormalizedPath {
  let body = pattern.startsWith('/') ? pattern.slice(1) : pattern
  const trailingSlash = body.length > 0 && body.endsWith('/')
  if (trailingSlash) body = body.slice(0, -1)
  return { segments: body === '' ? [] : body.split('/'), trailingSlash }
}

function decodeLiteral(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function emptyNode(): TrieNode {
  return { literal: null, mixed: null, param: null, routes: null }
}

// Fixes the order of alternatives once: mixed edges by literal length then text, routes by pattern.
function finish(node: TrieNode): void {
  node.routes?.sort((a, b) => compareCodePoints(a.entry.pattern, b.entry.pattern))
  node.mixed?.sort((a, b) => b.literalChars - a.literalChars || compareCodePoints(a.segment, b.segment))
  node.literal?.forEach(finish)
  node.mixed?.forEach(edge => finish(edge.node))
  if (node.param !== null) finish(node.param)
}
