// The segment tries `matchRoute` searches: one per method, built once per route table, so a lookup is
// a few Map gets and no regex compilation. Precedence (spec 01 plus the OpenAPI rule): segments are
// compared one by one; a `{param}` segment matches exactly one non-empty segment. When several patterns
// match, the one with a literal segment at the first position where they differ wins (literal > mixed
// template such as `{id}.json` > whole-segment template), i.e. a depth-first search that tries literals
// first. Remaining ties (`/pets/{id}` vs `/pets/{petId}`, `/report` vs `/report/`, or `/Report` vs
// `/report` when letter case is ignored) go to the stricter policy, then to the pattern whose trailing
// slash agrees with the request, then to the smaller pattern in code point order: an upstream that
// ignores a trailing slash may route either way, so the stricter route decides.
//
// Letter case: an index built case-insensitively compares literal segments (and the literal parts of
// mixed templates) case-folded; parameter values keep the case they were sent in.
import { compareCodePoints } from './extract-operations.js'
import type { RouteEntry } from './types.js'

type Slot = { index: number; name: string; regex?: undefined } | { index: number; regex: RegExp; names: string[] }

export interface CompiledRoute {
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

/** Segment tries per method over a fixed set of routes. */
export class RouteIndex {
  private readonly methods = new Map<string, TrieNode>()
  /** The last segments of literal-ended patterns (decoded, case-folded when case is ignored). */
  private readonly lastLiterals = new Set<string>()
  private longestLastLiteral = 0

  constructor(
    routes: readonly RouteEntry[],
    readonly caseSensitive = true,
  ) {
    for (const entry of routes) this.insert(entry)
    for (const root of this.methods.values()) finish(root)
  }

  /** True when some route has `method`. */
  hasMethod(method: string): boolean {
    return this.methods.has(method)
  }

  /** The best route for already normalized (decoded) segments, or undefined. */
  find(method: string, segments: readonly string[], trailingSlash: boolean): CompiledRoute | undefined {
    const root = this.methods.get(method)
    if (root === undefined) return undefined
    const keys = this.caseSensitive ? segments : segments.map(s => s.toLowerCase())
    const routes = search(root, keys, segments, 0)
    if (routes === null) return undefined
    // routes are sorted stricter first: the agreeing trailing slash only breaks a tie in strictness
    const strictest = strictness(routes[0]!.entry)
    for (const route of routes) {
      if (strictness(route.entry) < strictest) break
      if (route.trailingSlash === trailingSlash) return route
    }
    return routes[0]
  }

  /**
   * A last segment's stems with a format suffix cut off (`export.json`, `export.tar.gz` → `export`):
   * those ending where some literal-ended pattern's last segment ends, and the stem before the last
   * dot (one extension). Only stems a literal can equal are tried, so a segment of many dots costs
   * no more lookups than the longest literal has characters.
   */
  suffixStems(segment: string): string[] {
    const stems: string[] = []
    const lastDot = segment.lastIndexOf('.')
    if (lastDot <= 0) return stems
    for (let i = segment.indexOf('.', 1); i !== -1 && i <= this.longestLastLiteral; i = segment.indexOf('.', i + 1)) {
      if (i !== lastDot && this.lastLiterals.has(this.fold(segment.slice(0, i)))) stems.push(segment.slice(0, i))
    }
    stems.push(segment.slice(0, lastDot))
    return stems
  }

  /** Path parameters of `route` for the segments it matched, by template name. */
  params(route: CompiledRoute, segments: readonly string[]): Record<string, string> {
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

  private fold(text: string): string {
    return this.caseSensitive ? text : text.toLowerCase()
  }

  private insert(entry: RouteEntry): void {
    let node = this.methods.get(entry.method)
    if (node === undefined) {
      node = emptyNode()
      this.methods.set(entry.method, node)
    }
    const { segments, trailingSlash } = splitPattern(entry.pattern)
    const slots: Slot[] = []
    const flags = this.caseSensitive ? 's' : 'si'
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
        // the regex runs on the segment as sent: parameters keep their case, literals match either way
        const regex = new RegExp(source + escapeRegex(tail) + '$', flags)
        slots.push({ index, regex, names })
        node!.mixed ??= []
        const key = this.fold(segment)
        let edge = node!.mixed.find(e => e.segment === key)
        if (edge === undefined) {
          edge = { segment: key, regex, literalChars, node: emptyNode() }
          node!.mixed.push(edge)
        }
        node = edge.node
        return
      }
      node!.literal ??= new Map()
      const key = this.fold(decodeLiteral(segment))
      if (index === segments.length - 1) {
        this.lastLiterals.add(key)
        this.longestLastLiteral = Math.max(this.longestLastLiteral, key.length)
      }
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

/** A pattern's segments and whether it ends with a slash. */
export function splitPattern(pattern: string): { segments: string[]; trailingSlash: boolean } {
  let body = pattern.startsWith('/') ? pattern.slice(1) : pattern
  const trailingSlash = body.length > 0 && body.endsWith('/')
  if (trailingSlash) body = body.slice(0, -1)
  return { segments: body === '' ? [] : body.split('/'), trailingSlash }
}

// Depth-first, literal before mixed before param: the first complete match is the most specific.
// `keys` are the segments as compared with literals (case-folded or not), `raw` as sent.
function search(node: TrieNode, keys: readonly string[], raw: readonly string[], i: number): CompiledRoute[] | null {
  if (i === keys.length) return node.routes
  if (node.literal !== null) {
    const next = node.literal.get(keys[i]!)
    if (next !== undefined) {
      const found = search(next, keys, raw, i + 1)
      if (found !== null) return found
    }
  }
  const segment = raw[i]!
  if (node.mixed !== null) {
    for (const edge of node.mixed) {
      if (!edge.regex.test(segment)) continue
      const found = search(edge.node, keys, raw, i + 1)
      if (found !== null) return found
    }
  }
  if (node.param !== null && segment !== '') return search(node.param, keys, raw, i + 1)
  return null
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

// Fixes the order of alternatives once: mixed edges by literal length then text; routes sharing a node
// (same shape, or patterns equal but for letter case) stricter policy first, then by pattern.
function finish(node: TrieNode): void {
  node.routes?.sort((a, b) => strictness(b.entry) - strictness(a.entry) || compareCodePoints(a.entry.pattern, b.entry.pattern))
  node.mixed?.sort((a, b) => b.literalChars - a.literalChars || compareCodePoints(a.segment, b.segment))
  node.literal?.forEach(finish)
  node.mixed?.forEach(edge => finish(edge.node))
  if (node.param !== null) finish(node.param)
}

/** Higher is stricter: an approval, then deny-by-default, then a session allow. */
export function strictness(entry: Pick<RouteEntry, 'decision' | 'approvalRequired'>): number {
  return entry.approvalRequired ? 2 : entry.decision === 'DenyByDefault' ? 1 : 0
}
