// `$ref` resolution inside one document (spec 01, Input document rules: only `#/` pointers resolve).
// Hand-written rather than @apidevtools/json-schema-ref-parser: it never has a file system or network
// to reach, and on GitHub's REST description the parser's internal-only dereference took ~900 ms
// against a few ms of pointer look-ups here (numbers in README.md here).
import { OpenApiError } from './errors.js'

/** A resolved reference: the canonical pointer (re-escaped, percent-decoded) and the value there. */
export interface ResolvedRef {
  pointer: string
  value: unknown
}

/** True for a Reference Object: an object whose `$ref` is a string. */
export function isReference(node: unknown): node is { $ref: string } & Record<string, unknown> {
  return node !== null && typeof node === 'object' && typeof (node as { $ref?: unknown }).$ref === 'string'
}

/** Resolves `#/` JSON pointers against one document root, caching each distinct ref string. */
export class RefResolver {
  private readonly root: unknown
  private readonly cache = new Map<string, ResolvedRef>()

  constructor(root: unknown) {
    this.root = root
  }

  /** The value one `$ref` points at (one hop); `location` is where the `$ref` appeared, for errors. */
  resolve(ref: string, location: string): ResolvedRef {
    const cached = this.cache.get(ref)
    if (cached !== undefined) return cached
    const resolved = this.walk(ref, location)
    this.cache.set(ref, resolved)
    return resolved
  }

  /**
   * Follows `$ref` hops until a non-reference value (path items, parameters, bodies, responses);
   * a chain that comes back on itself is `UnresolvedRef`.
   */
  resolveChain(node: unknown, location: string): { value: unknown; location: string } {
    let current = node
    let where = location
    const seen = new Set<string>()
    while (isReference(current)) {
      const ref = current.$ref
      const { pointer, value } = this.resolve(ref, `${where}.$ref`)
      if (seen.has(pointer)) throw new OpenApiError('UnresolvedRef', `${where}.$ref`, `"${ref}" is circular`)
      seen.add(pointer)
      current = value
      where = pointerToLocation(pointer)
    }
    return { value: current, location: where }
  }

  private walk(ref: string, location: string): ResolvedRef {
    if (!ref.startsWith('#/')) {
      throw new OpenApiError('UnresolvedRef', location, `"${ref}" is not a local "#/" pointer`)
    }
    const tokens = ref.slice(2).split('/')
    let current: unknown = this.root
    for (let i = 0; i < tokens.length; i++) {
      const token = decodeToken(tokens[i]!, ref, location)
      tokens[i] = token
      current = child(current, token)
      if (current === undefined) throw new OpenApiError('UnresolvedRef', location, `"${ref}" points to nothing`)
    }
    return { pointer: `#/${tokens.map(escapeToken).join('/')}`, value: current }
  }
}

function decodeToken(raw: string, ref: string, location: string): string {
  let token = raw
  if (token.includes('%')) {
    try {
      token = decodeURIComponent(token)
    } catch {
      throw new OpenApiError('UnresolvedRef', location, `"${ref}" has malformed percent-encoding`)
    }
  }
  // RFC 6901: ~1 before ~0, so "~01" decodes to "~1", not "/".
  return token.includes('~') ? token.replace(/~1/g, '/').replace(/~0/g, '~') : token
}

/** Escapes one JSON pointer token (RFC 6901). */
export function escapeToken(token: string): string {
  return token.includes('~') || token.includes('/') ? token.replace(/~/g, '~0').replace(/\//g, '~1') : token
}

const ARRAY_INDEX = /^(0|[1-9]\d*)$/

function child(node: unknown, token: string): unknown {
  if (Array.isArray(node)) return ARRAY_INDEX.test(token) ? node[Number(token)] : undefined
  if (node === null || typeof node !== 'object') return undefined
  // Own properties only: "#/components/__proto__" must not walk into Object.prototype.
  return Object.hasOwn(node, token) ? (node as Record<string, unknown>)[token] : undefined
}

/** Renders a canonical pointer in the dotted location style of error messages. */
export function pointerToLocation(pointer: string): string {
  return pointer
    .slice(2)
    .split('/')
    .map(t => t.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}
