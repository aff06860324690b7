// RFC 8785 (JCS) canonical JSON. Written here rather than taken from `canonicalize` because Gate needs
// two things it lacks: exact integers beyond double precision (bigint, see parse-json-exact.ts) and a
// hard error instead of silent output for values JSON cannot carry. `canonicalize` stays the oracle in
// the property tests (canonical-json.test.ts).
import { CanonicalJsonError } from '../errors.js'

/** Nesting deeper than this is refused; it also stops a cyclic structure without tracking ancestors. */
const MAX_DEPTH = 256

/** The canonical JSON text of `value`. Object members whose value is `undefined` are omitted. */
export function canonicalJson(value: unknown): string {
  return write(value, 0)
}

/** The canonical text of each member of a plain object, keyed by member name, for callers that
 *  assemble several canonical forms of one object (with and without `id`, say) from one pass. */
export function canonicalMembers(obj: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>()
  for (const key of Object.keys(obj)) {
    const v = obj[key]
    if (v === undefined) continue
    out.set(key, write(v, 1))
  }
  return out
}

/** Joins canonical member texts (from `canonicalMembers`) into one canonical object, skipping `omit`. */
export function joinCanonicalMembers(members: Map<string, string>, omit?: ReadonlySet<string>): string {
  const keys = [...members.keys()].sort()
  let s = '{'
  let first = true
  for (const k of keys) {
    if (omit !== undefined && omit.has(k)) continue
    if (!first) s += ','
    first = false
    s += writeString(k) + ':' + (members.get(k) as string)
  }
  return s + '}'
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return writeString(value)
    case 'number':
      return writeNumber(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'bigint':
      // Integers beyond double precision (RFC 8785 leaves them to the application): written exactly.
      return value.toString()
    case 'object':
      if (value === null) return 'null'
      if (depth >= MAX_DEPTH) throw new CanonicalJsonError(`nesting deeper than ${MAX_DEPTH} levels (or a cycle)`)
      if (Array.isArray(value)) return writeArray(value, depth + 1)
      return writeObject(value as Record<string, unknown>, depth + 1)
    default:
      throw new CanonicalJsonError(`a ${typeof value} value is not JSON`)
  }
}

function writeNumber(n: number): string {
  if (!Number.isFinite(n)) throw new CanonicalJsonError(`${n} is not a JSON number`)
  // ECMAScript Number-to-string is exactly the RFC 8785 number form; -0 renders as "0".
  return String(n)
}

function writeString(s: string): string {
  // I-JSON (RFC 7493), which RFC 8785 requires: lone surrogates are not allowed.
  if (!s.isWellFormed()) throw new CanonicalJsonError('string contains a lone surrogate')
  return JSON.stringify(s)
}

function writeArray(arr: unknown[], depth: number): string {
  let s = '['
  for (let i = 0; i < arr.length; i++) {
    if (i > 0) s += ','
    const v = arr[i]
    if (v === undefined) throw new CanonicalJsonError(`array element ${i} is undefined`)
    s += write(v, depth)
  }
  return s + ']'
}

function writeObject(obj: Record<string, unknown>, depth: number): string {
  const proto = Object.getPrototypeOf(obj)
  if (proto !== Object.prototype && proto !== null) {
    throw new CanonicalJsonError(`a ${obj.constructor?.name ?? 'non-plain'} object is not JSON`)
  }
  // Default sort compares UTF-16 code units, which is the RFC 8785 member order.
  const keys = Object.keys(obj).sort()
  let s = '{'
  let first = true
  for (const k of keys) {
    const v = obj[k]
    if (v === undefined) continue
    if (!first) s += ','
    first = false
    s += writeString(k) + ':' + write(v, depth)
  }
  return s + '}'
}
