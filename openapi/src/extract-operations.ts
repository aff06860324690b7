// Operations of a document (spec 01, "Input document rules" and "Parameters"): paths sorted by name,
// methods read in the order GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, other keys ignored;
// path-level and operation-level parameters merged, the operation's winning on the same name and `in`.
import { HTTP_METHODS, type HttpMethod } from '@gate/sdk'
import { OpenApiError } from './errors.js'
import { isPlainObject } from './is-plain-object.js'
import type { OpenApiDocument } from './parse-document.js'
import { isReference, type RefResolver } from './resolve-refs.js'

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie'

const LOCATIONS: ReadonlySet<string> = new Set<ParameterLocation>(['path', 'query', 'header', 'cookie'])

/** A parameter after `$ref` resolution and the spec's checks. */
export interface ExtractedParameter {
  name: string
  in: ParameterLocation
  /** `required`, defaulting to true for path parameters and false otherwise. */
  required: boolean
  description: string | undefined
  /** The raw `schema` value (possibly a `$ref`), undefined when absent. */
  schema: unknown
  /** Where the parameter object sits, for error messages. */
  location: string
}

/** One HTTP operation of the document. */
export interface ExtractedOperation {
  method: HttpMethod
  path: string
  /** The raw operation object: `x-gate-*` keys are read from here. */
  operation: Record<string, unknown>
  parameters: ExtractedParameter[]
  /** e.g. `paths./pets.get`. */
  location: string
}

/** Every operation of the document, in path order then method order. */
export function extractOperations(doc: OpenApiDocument, resolver: RefResolver): ExtractedOperation[] {
  const out: ExtractedOperation[] = []
  // Paths Object extensions (`x-…`) are not paths.
  const paths = Object.keys(doc.paths).filter(p => !p.startsWith('x-')).sort(compareCodePoints)
  for (const path of paths) {
    const location = `paths.${path}`
    const item = readPathItem(doc.paths[path], location, resolver)
    const shared = readParameters(item.parameters, `${location}.parameters`, resolver)
    for (const method of HTTP_METHODS) {
      const key = method.toLowerCase()
      const operation = item[key]
      if (operation === undefined) continue
      const where = `${location}.${key}`
      if (!isPlainObject(operation)) throw new OpenApiError('InvalidSpec', where, 'an operation must be an object')
      const own = readParameters(operation.parameters, `${where}.parameters`, resolver)
      out.push({ method, path, operation, parameters: mergeParameters(shared, own), location: where })
    }
  }
  return out
}

function readPathItem(raw: unknown, location: string, resolver: RefResolver): Record<string, unknown> {
  if (!isReference(raw)) {
    if (!isPlainObject(raw)) throw new OpenApiError('InvalidSpec', location, 'a path item must be an object')
    return raw
  }
  const { value, location: target } = resolver.resolveChain(raw, location)
  if (!isPlainObject(value)) throw new OpenApiError('InvalidSpec', target, 'a path item must be an object')
  // Fields beside `$ref` override the referenced path item (OpenAPI leaves this undefined; this is
  // the reading that keeps both). Operation objects are shared, not copied.
  const { $ref: _ref, ...own } = raw
  return { ...value, ...own }
}

function readParameters(raw: unknown, location: string, resolver: RefResolver): ExtractedParameter[] {
  if (raw === undefined) return []
  if (!Array.isArray(raw)) throw new OpenApiError('InvalidSpec', location, 'parameters must be an array')
  return raw.map((entry, i) => readParameter(entry, `${location}[${i}]`, resolver))
}

function readParameter(raw: unknown, location: string, resolver: RefResolver): ExtractedParameter {
  const { value, location: where } = resolver.resolveChain(raw, location)
  const via = where === location ? undefined : `referenced from ${location}`
  if (!isPlainObject(value)) throw new OpenApiError('InvalidSpec', where, join('a parameter must be an object', via))
  const name = value.name
  if (typeof name !== 'string' || name === '') {
    throw new OpenApiError('MissingField', `${where}.name`, join(name === undefined ? undefined : 'must be a non-empty string', via))
  }
  const at = value.in
  if (at === undefined) throw new OpenApiError('MissingField', `${where}.in`, via)
  if (typeof at !== 'string' || !LOCATIONS.has(at)) {
    throw new OpenApiError('InvalidSpec', `${where}.in`, join(`${JSON.stringify(at)} is not one of path, query, header, cookie`, via))
  }
  const required = value.required ?? at === 'path'
  if (typeof required !== 'boolean') throw new OpenApiError('InvalidSpec', `${where}.required`, join('must be a boolean', via))
  const description = value.description
  return {
    name,
    in: at as ParameterLocation,
    required,
    description: typeof description === 'string' && description !== '' ? description : undefined,
    schema: value.schema,
    location: where,
  }
}

// Path-level order first, an operation-level parameter replacing its path-level twin in place; new
// operation-level parameters follow in their own order. Within one level a repeat replaces too.
function mergeParameters(shared: ExtractedParameter[], own: ExtractedParameter[]): ExtractedParameter[] {
  if (own.length === 0 && shared.length === 0) return []
  const merged: ExtractedParameter[] = []
  const slots = new Map<string, number>()
  for (const parameter of [...shared, ...own]) {
    const key = `${parameter.in}\u0000${parameter.name}`
    const slot = slots.get(key)
    if (slot === undefined) {
      slots.set(key, merged.length)
      merged.push(parameter)
    } else {
      merged[slot] = parameter
    }
  }
  return merged
}

function join(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b
  return b === undefined ? a : `${a}; ${b}`
}

/** Orders strings by Unicode code point (UTF-8 byte order), not UTF-16 code unit. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return rank(x) - rank(y)
  }
  return a.length - b.length
}

// Surrogates (code points ≥ U+10000) sort after U+E000–U+FFFF in code point order.
function rank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000
  if (unit >= 0xe000) return unit - 0x800
  return unit
}
