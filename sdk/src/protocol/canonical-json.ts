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

/**
 * A plain object canonicalized member by member, for callers that need several canonical forms of one
 * object (with and without `id`, then with `signature`): each member value is serialized once, and
 * each form is a join of ready-made member texts in RFC 8785 order.
 */
export class CanonicalMembers {
  #keys: string[]
  readonly #parts = new Map<string, string>()

  /** `skip`: member names left out (as if absent). */
  constructor(obj: Record<string, unknown>, skip?: ReadonlySet<string>) {
    for (const key of Object.keys(obj)) {
      const v = obj[key]
      if (v !== undefined && (skip === undefined || !skip.has(key))) this.#parts.set(key, writeString(key) + ':' + write(v, 1))
    }
    this.#keys = [...this.#parts.keys()].sort()
  }

  /** Sets a member from its already-canonical value text. */
  set(key: string, valueText: string): void {
    if (!this.#parts.has(key)) {
      let i = 0
      while (i < this.#keys.length && (this.#keys[i] as string) < key) i++
      this.#keys.splice(i, 0, key)
    }
    this.#parts.set(key, writeString(key) + ':' + valueText)
  }

  has(key: string): boolean {
    return this.#parts.has(key)
  }

  /** The canonical object text, leaving out the member `omit` if given. */
  join(omit?: string): string {
    let s = '{'
    for (const k of this.#keys) {
      if (k === omit) continue
      if (s.length > 1) s += ','
      s += this.#parts.get(k) as string
    }
    return s + '}'
  }
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

// Printable ASCII without `"` and `\`: such a string is its own canonical text between quotes. Most of
// a receipt (hex digests, ids, enum values) is like that; the test is about twice as fast as the
// general path below (measured: ~100 ns against ~200 ns per string).
const NEEDS_NO_ESCAPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

function writeString(s: string): string {
  if (NEEDS_NO_ESCAPE.test(s)) return '"' + s + '"'
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
