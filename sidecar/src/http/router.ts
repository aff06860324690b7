// A small router: exact paths in a map (the hot /gate/* routes cost one lookup), `:param` patterns
// in a short list. Answers "not found" and "method not allowed" distinctly.
import type { IncomingMessage, ServerResponse } from 'node:http'

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL) => void | Promise<void>

interface PatternRoute {
  /** The template as added (`/approvals/:id`): a bounded metrics label, unlike the path. */
  pattern: string
  segments: string[]
  handlers: Map<string, RouteHandler>
}

export type RouteLookup =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string>; pattern: string }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' }

export class Router {
  readonly #exact = new Map<string, Map<string, RouteHandler>>()
  readonly #patterns: PatternRoute[] = []

  add(method: string, path: string, handler: RouteHandler): this {
    if (path.includes('/:')) {
      const segments = path.split('/')
      let route = this.#patterns.find(p => p.segments.join('/') === segments.join('/'))
      if (route === undefined) {
        route = { pattern: path, segments, handlers: new Map() }
        this.#patterns.push(route)
      }
      route.handlers.set(method, handler)
    } else {
      let byMethod = this.#exact.get(path)
      if (byMethod === undefined) this.#exact.set(path, (byMethod = new Map()))
      byMethod.set(method, handler)
    }
    return this
  }

  /** True when some route (any method) is mounted at this path. */
  has(path: string): boolean {
    return this.lookup('GET', path).kind !== 'not_found'
  }

  lookup(method: string, path: string): RouteLookup {
    const exact = this.#exact.get(path)
    if (exact !== undefined) return pick(exact, method, {}, path)
    const parts = path.split('/')
    for (const route of this.#patterns) {
      if (route.segments.length !== parts.length) continue
      const params: Record<string, string> = {}
      let ok = true
      for (let i = 0; i < parts.length && ok; i++) {
        const seg = route.segments[i] as string
        const part = parts[i] as string
        if (seg.startsWith(':')) {
          if (part === '') ok = false
          else params[seg.slice(1)] = safeDecode(part)
        } else if (seg !== part) ok = false
      }
      if (ok) return pick(route.handlers, method, params, route.pattern)
    }
    return { kind: 'not_found' }
  }
}

function pick(handlers: Map<string, RouteHandler>, method: string, params: Record<string, string>, pattern: string): RouteLookup {
  const h = handlers.get(method) ?? (method === 'HEAD' ? handlers.get('GET') : undefined)
  if (h !== undefined) return { kind: 'found', handler: h, params, pattern }
  return { kind: 'method_not_allowed', allowed: [...handlers.keys()] }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
