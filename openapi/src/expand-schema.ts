// Inlines `$ref`s inside schemas so each tool schema stands alone (spec 01: references are expanded
// before generation). Three things make that safe on hostile or just large documents:
//  - recursion: a reference back to a schema still being expanded (tree node, linked list, mutual
//    recursion) marks that schema; every use of a marked schema becomes `{"$ref": "#/$defs/<key>"}`
//    and its body is placed once under the tool schema's root `$defs`. Expansion always terminates.
//  - explosion: each referenced schema is expanded once and shared (memoized) and its size counted.
//    One whose expansion exceeds `maxInlineNodes` JSON values is cut into `$defs` the same way, so a
//    billion-laughs document (each level referencing the previous one twice) stays linear. The
//    serialized size of all tool schemas of a document is capped by `maxTotalChars` (InvalidSpec),
//    and nesting by `maxDepth`, so neither `JSON.stringify(manifest)` nor the stack can blow up.
//  - data: values of `example`, `examples`, `default`, `enum`, `const` and `x-*` keys are copied as
//    they are; a `$ref` there is content, not a reference.
// Unchanged subtrees are returned as is (copy on write): memory stays near the document's size even
// when the serialized manifest is hundreds of megabytes.
import { OpenApiError } from './errors.js'
import { escapeToken, isReference, pointerToLocation, type RefResolver } from './resolve-refs.js'

/** Work bounds of schema expansion. */
export interface ExpansionLimits {
  /** Deepest nesting of an expanded schema (levels); deeper is InvalidSpec. Default 512. */
  maxDepth: number
  /** A referenced schema whose inline expansion has more JSON values goes to `$defs`. Default 20 000. */
  maxInlineNodes: number
  /** Cap on the serialized characters of all tool schemas of one document. Default 480 000 000. */
  maxTotalChars: number
}

// Measured (README.md here): GitHub's api.github.com.json nests 24 levels deep at most, its largest
// referenced schema expands to 18 346 values (so it stays fully inline) and all its tool schemas to
// ~11 MB; Stripe's to ~430 MB, DocuSign's to ~870 MB were the cut at 50 000 instead. The character cap
// sits under V8's longest string (2^29 − 24) so an accepted manifest always serializes; Microsoft
// Graph (~24 GB of JSON fully expanded, still ~1.5 GB with every schema over 200 values cut) is refused.
export const EXPANSION_LIMITS: Readonly<ExpansionLimits> = Object.freeze({
  maxDepth: 512,
  maxInlineNodes: 20_000,
  maxTotalChars: 480_000_000,
})

const DATA_KEYWORDS: ReadonlySet<string> = new Set(['example', 'examples', 'default', 'enum', 'const'])
// Keywords whose value maps names to schemas: the names are never keywords.
const MAP_KEYWORDS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
])
// OpenAPI component names are restricted to this set; other pointers keep their full form as key.
const PLAIN_COMPONENT_NAME = /^[A-Za-z0-9._-]+$/
const SCHEMA_COMPONENT_PREFIX = '#/components/schemas/'

interface Entry {
  state: 'open' | 'done'
  /** The inline expansion, or for a marked entry the body placed in `$defs`. */
  value: unknown
  /** JSON values of the expansion. */
  size: number
  /** Approximate serialized characters of the expansion. */
  chars: number
  height: number
  defs: string[] | null
  /** Recursive or too large: referenced through `$defs` rather than inlined. */
  marked: boolean
  key: string
  refChars: number
}

type PathKey = string | number

/** Expands schemas of one document, sharing work across all of its tools. */
export class SchemaExpander {
  private readonly resolver: RefResolver
  private readonly limits: ExpansionLimits
  private readonly entries = new Map<string, Entry>()
  private readonly keys = new Map<string, string>()
  private collectors: Set<string>[] = []
  private nodes = 0
  private chars = 0
  private depthReached = 0
  private base = ''
  private path: PathKey[] = []
  private totalChars = 0

  constructor(resolver: RefResolver, limits: ExpansionLimits = EXPANSION_LIMITS) {
    this.resolver = resolver
    this.limits = limits
  }

  /**
   * Expands one schema found at `location`. Keys of `$defs` entries the result refers to are added
   * to `defs`; pass the same set for every schema under one root, then call `definitionsFor`.
   */
  expand(schema: unknown, location: string, defs: Set<string>): unknown {
    this.base = location
    this.path = []
    this.nodes = 0
    this.chars = 0
    this.depthReached = 0
    this.collectors = [defs]
    const out = this.node(schema, 1)
    this.count(this.chars)
    return out
  }

  /** The `$defs` object (sorted keys) closing over `defs`, or undefined when there are none. */
  definitionsFor(defs: Set<string>): Record<string, unknown> | undefined {
    if (defs.size === 0) return undefined
    const pending = [...defs]
    const pointers = new Set<string>(pending)
    while (pending.length > 0) {
      const entry = this.entries.get(pending.pop()!)!
      for (const next of entry.defs ?? []) {
        if (!pointers.has(next)) {
          pointers.add(next)
          pending.push(next)
        }
      }
    }
    const byKey = [...pointers].map(p => this.entries.get(p)!).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const out: Record<string, unknown> = {}
    for (const entry of byKey) {
      setOwn(out, entry.key, entry.value)
      this.count(entry.chars + entry.key.length + 4)
    }
    return out
  }

  /** Approximate serialized characters of every schema expanded so far. */
  get expandedChars(): number {
    return this.totalChars
  }

  private count(chars: number): void {
    this.totalChars += chars
    if (this.totalChars > this.limits.maxTotalChars) {
      throw new OpenApiError(
        'InvalidSpec',
        'document',
        `expanded tool schemas exceed ${this.limits.maxTotalChars} characters; the document's references multiply out too far`,
      )
    }
  }

  private node(value: unknown, depth: number): unknown {
    if (value === null || typeof value !== 'object') {
      this.nodes++
      this.chars += primitiveChars(value)
      return value
    }
    if (depth > this.limits.maxDepth) {
      throw new OpenApiError('InvalidSpec', this.render(), `schema nested deeper than ${this.limits.maxDepth} levels`)
    }
    if (depth > this.depthReached) this.depthReached = depth
    if (Array.isArray(value)) return this.array(value, depth)
    if (isReference(value)) return this.reference(value, depth)
    this.nodes++
    this.chars += 2
    const source = value as Record<string, unknown>
    let out: Record<string, unknown> | null = null
    for (const key of Object.keys(source)) {
      const child = source[key]
      let expanded: unknown
      this.chars += key.length + 4
      this.path.push(key)
      if (DATA_KEYWORDS.has(key) || key.startsWith('x-')) {
        this.nodes++
        this.chars += this.dataChars(child, depth + 1)
        expanded = child
      } else if (MAP_KEYWORDS.has(key) && child !== null && typeof child === 'object' && !Array.isArray(child) && !isReference(child)) {
        expanded = this.map(child as Record<string, unknown>, depth + 1)
      } else {
        expanded = this.node(child, depth + 1)
      }
      this.path.pop()
      if (expanded !== child) {
        out ??= { ...source }
        setOwn(out, key, expanded)
      }
    }
    return out ?? source
  }

  // Data is copied as it is, but it lands in the manifest too: it counts toward the size cap and must
  // not nest past the depth limit either (JSON.parse accepts any depth; JSON.stringify would overflow).
  private dataChars(value: unknown, depth: number): number {
    if (value === null || typeof value !== 'object') return primitiveChars(value)
    if (depth > this.limits.maxDepth) {
      throw new OpenApiError('InvalidSpec', this.render(), `value nested deeper than ${this.limits.maxDepth} levels`)
    }
    if (depth > this.depthReached) this.depthReached = depth
    let chars = 2
    if (Array.isArray(value)) {
      for (const item of value) chars += this.dataChars(item, depth + 1) + 1
    } else {
      for (const key of Object.keys(value)) chars += key.length + 4 + this.dataChars((value as Record<string, unknown>)[key], depth + 1)
    }
    return chars
  }

  private array(source: unknown[], depth: number): unknown[] {
    this.nodes++
    this.chars += 2 + source.length
    let out: unknown[] | null = null
    for (let i = 0; i < source.length; i++) {
      this.path.push(i)
      const expanded = this.node(source[i], depth + 1)
      this.path.pop()
      if (expanded !== source[i]) {
        out ??= source.slice()
        out[i] = expanded
      }
    }
    return out ?? source
  }

  private map(source: Record<string, unknown>, depth: number): Record<string, unknown> {
    this.nodes++
    this.chars += 2
    let out: Record<string, unknown> | null = null
    for (const name of Object.keys(source)) {
      this.chars += name.length + 4
      this.path.push(name)
      const expanded = this.node(source[name], depth + 1)
      this.path.pop()
      if (expanded !== source[name]) {
        out ??= { ...source }
        setOwn(out, name, expanded)
      }
    }
    return out ?? source
  }

  private reference(source: { $ref: string } & Record<string, unknown>, depth: number): unknown {
    this.path.push('$ref')
    const where = this.render()
    this.path.pop()
    const { pointer, value: target } = this.resolver.resolve(source.$ref, where)
    let entry = this.entries.get(pointer)
    if (entry === undefined) {
      // A target that is itself only a reference must not lead back to itself (`A → B → A`).
      if (isReference(target)) this.resolver.resolveChain(target, pointerToLocation(pointer))
      entry = this.open(pointer, target, depth)
    } else if (entry.state === 'open') {
      entry.marked = true
    } else if (!entry.marked) {
      const reached = depth + entry.height
      if (reached > this.limits.maxDepth) {
        throw new OpenApiError('InvalidSpec', where, `schema nested deeper than ${this.limits.maxDepth} levels`)
      }
      if (reached > this.depthReached) this.depthReached = reached
    }
    const collector = this.collectors[this.collectors.length - 1]!
    let out: unknown
    if (entry.marked) {
      collector.add(pointer)
      out = { $ref: `#/$defs/${encodeURIComponent(escapeToken(entry.key))}` }
      this.nodes += 2
      this.chars += entry.refChars
    } else {
      if (entry.defs !== null) for (const key of entry.defs) collector.add(key)
      this.nodes += entry.size
      this.chars += entry.chars
      out = entry.value
    }
    return this.withSiblings(source, out, depth)
  }

  // Expands a referenced schema once, in a fresh accounting frame, and decides whether it is cut.
  private open(pointer: string, target: unknown, depth: number): Entry {
    const key = this.keyOf(pointer)
    const entry: Entry = {
      state: 'open',
      value: undefined,
      size: 0,
      chars: 0,
      height: 0,
      defs: null,
      marked: false,
      key,
      refChars: 20 + encodeURIComponent(escapeToken(key)).length,
    }
    this.entries.set(pointer, entry)
    const saved = { nodes: this.nodes, chars: this.chars, depthReached: this.depthReached, base: this.base, path: this.path }
    this.nodes = 0
    this.chars = 0
    this.depthReached = depth
    this.base = pointerToLocation(pointer)
    this.path = []
    const defs = new Set<string>()
    this.collectors.push(defs)
    try {
      entry.value = this.node(target, depth + 1)
    } finally {
      this.collectors.pop()
    }
    entry.size = this.nodes
    entry.chars = this.chars
    entry.height = this.depthReached - depth
    entry.defs = defs.size > 0 ? [...defs] : null
    entry.state = 'done'
    if (entry.size > this.limits.maxInlineNodes) entry.marked = true
    this.nodes = saved.nodes
    this.chars = saved.chars
    this.base = saved.base
    this.path = saved.path
    this.depthReached = entry.marked ? saved.depthReached : Math.max(saved.depthReached, this.depthReached)
    return entry
  }

  // OpenAPI 3.1 lets a schema `$ref` carry siblings (and 3.0 documents often add `description`):
  // they are applied over the referenced schema, the usual reading of both versions.
  private withSiblings(source: Record<string, unknown>, target: unknown, depth: number): unknown {
    const keys = Object.keys(source)
    if (keys.length === 1) return target
    const siblings: Record<string, unknown> = {}
    for (const key of keys) {
      if (key === '$ref') continue
      this.path.push(key)
      const child = source[key]
      this.chars += key.length + 4
      if (DATA_KEYWORDS.has(key) || key.startsWith('x-')) {
        this.chars += this.dataChars(child, depth + 1)
        setOwn(siblings, key, child)
      } else {
        setOwn(siblings, key, this.node(child, depth + 1))
      }
      this.path.pop()
    }
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) return { ...target, ...siblings }
    return { allOf: [target], ...siblings }
  }

  private keyOf(pointer: string): string {
    let key = this.keys.get(pointer)
    if (key === undefined) {
      const name = pointer.startsWith(SCHEMA_COMPONENT_PREFIX) ? pointer.slice(SCHEMA_COMPONENT_PREFIX.length) : ''
      key = PLAIN_COMPONENT_NAME.test(name) ? name : pointer
      this.keys.set(pointer, key)
    }
    return key
  }

  private render(): string {
    let out = this.base
    for (const key of this.path) out += typeof key === 'number' ? `[${key}]` : `.${key}`
    return out
  }
}

// Serialized length estimate; strings are counted without escapes (a slight undercount the cap's
// margin below V8's string limit absorbs).
function primitiveChars(value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (typeof value === 'number') return 8
  return 5
}

/** Defines an own enumerable property, safe for names like `__proto__`. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}
