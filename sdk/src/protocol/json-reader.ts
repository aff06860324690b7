// The one strict JSON reader of the project. A first pass checks the text without building anything:
// RFC 8259 grammar, a depth and a node-count limit, and I-JSON (RFC 7493, which RFC 8785 requires of
// anything Gate signs): no lone surrogate, escaped or raw, in a string or a member name. Only then is
// the value built, by JSON.parse (native, fast) or, when an exact integer or a number's source text is
// wanted, by a second pass of the same reader. A deeply nested or node-heavy body is refused after
// reading as many characters as the limit allows, before any object exists: JSON.parse alone builds
// five million nested arrays out of a 5 MiB `[[[[…` body (~150 MB each, docs/security.md).
//
// Duplicate member names keep the last value, as JSON.parse does; a caller that must refuse them names
// the member whose keys must be unique (`uniqueMembersIn`, the evaluate body's `query`).
import { BadRequestError, isGateError } from '../errors.js'

/** Options of `readJson`; every field optional. */
export interface JsonReadOptions {
  /** Deepest nesting of arrays and objects (`{"a":[1]}` nests 2). Default 64. */
  maxDepth?: number
  /** Most values in the document: every object, array, string, number and literal. Default 100,000. */
  maxNodes?: number
  /** Integer literals beyond ±(2^53−1): `'number'` (rounded, as JSON.parse) or `'bigint'` (exact). Default `'number'`. */
  bigIntegers?: 'number' | 'bigint'
  /** A top-level object member whose own member names must not repeat (compared decoded). */
  uniqueMembersIn?: string
  /** A top-level array member whose elements are also returned as their exact source texts. */
  rawElementsOf?: string
  /** A member name whose number values are also returned as source literals, keyed by the holding object. */
  numberLiteralsOf?: string
  /** A top-level object member whose value is also returned as its exact source text (`rawMember`). */
  rawMemberOf?: string
}

/** The defaults of `JsonReadOptions` (request bodies; documents read at start-up pass their own). */
export const JSON_READ_DEFAULTS = Object.freeze({ maxDepth: 64, maxNodes: 100_000 })

/** What `readJson` found besides the value. */
export interface JsonReadResult {
  value: unknown
  /** The first repeated member name inside `uniqueMembersIn`, if any. */
  duplicateMember?: string
  /** Source texts of the elements of `rawElementsOf`, when that member is an array. */
  rawElements?: string[]
  /** Source literals of the `numberLiteralsOf` numbers, by holding object. */
  numberLiterals?: WeakMap<object, string>
  /**
   * The source text of the `rawMemberOf` member's value: the bytes the value was read from. Absent when
   * the name is not there, occurs twice, or any top-level member name holds an escape (`"rec\u0065ipt"`
   * names the same member, and the value keeps the last of two).
   */
  rawMember?: string
}

/** Why a text was refused: `syntax` (not JSON), `limit` (too deep or too many values), `i-json` (lone surrogate). */
export type JsonProblemKind = 'syntax' | 'limit' | 'i-json'

/** A text `readJson` refuses: 400 gate_bad_request, with where and why. */
export class JsonReadError extends BadRequestError {
  constructor(
    readonly kind: JsonProblemKind,
    readonly offset: number,
    readonly detail: string,
  ) {
    super(kind === 'i-json' ? `not I-JSON (RFC 7493): ${detail}` : kind === 'limit' ? detail : `invalid JSON at offset ${offset}: ${detail}`)
    this.name = 'JsonReadError'
  }
}

/** True for a JsonReadError, even one from another installed copy of this package. */
export function isJsonReadError(value: unknown): value is JsonReadError {
  return isGateError(value) && value.name === 'JsonReadError' && typeof (value as { offset?: unknown }).offset === 'number'
}

/** Reads JSON text under the limits; throws JsonReadError (gate_bad_request) when it is refused. */
export function readJson(text: string, options: JsonReadOptions = {}): JsonReadResult {
  const reader = new Reader(text, options, false)
  reader.document()
  const result: JsonReadResult = { value: undefined }
  if (reader.duplicate !== undefined) result.duplicateMember = reader.duplicate
  if (reader.rawSpans !== undefined) result.rawElements = reader.rawSpans.map(([start, end]) => text.slice(start, end))
  if (reader.rawMember !== undefined && reader.rawMember !== AMBIGUOUS) result.rawMember = text.slice(reader.rawMember[0], reader.rawMember[1])
  const exact = reader.sawLongInteger && options.bigIntegers === 'bigint'
  if (!exact && !reader.sawWantedLiteral) {
    // the first pass proved the text is JSON, so JSON.parse cannot fail here
    result.value = JSON.parse(text)
    return result
  }
  const builder = new Reader(text, options, true)
  result.value = builder.document()
  if (builder.literals !== undefined) result.numberLiterals = builder.literals
  return result
}

const QUOTE = 0x22
const AMBIGUOUS = 'ambiguous'
const BACKSLASH = 0x5c

// One pass over the text. In check mode (`build` false) nothing is allocated per value; in build mode
// the same walk returns the values (used only for exact integers and number literals).
class Reader {
  i = 0
  nodes = 0
  duplicate: string | undefined
  rawSpans: [number, number][] | undefined
  /** The value span of the `rawMemberOf` member; AMBIGUOUS once no single span can be trusted. */
  rawMember: [number, number] | typeof AMBIGUOUS | undefined
  literals: WeakMap<object, string> | undefined
  sawLongInteger = false
  sawWantedLiteral = false
  /** Start of the last number literal read (it ends where the reader stands after it). */
  numberStart = 0
  readonly #maxDepth: number
  readonly #maxNodes: number
  // where we are, for the JSON Pointer of an I-JSON failure: per open container, an index or a key span
  readonly #index: number[] = []
  readonly #keyStart: number[] = []
  readonly #keyEnd: number[] = []

  constructor(
    readonly s: string,
    readonly options: JsonReadOptions,
    readonly build: boolean,
  ) {
    this.#maxDepth = options.maxDepth ?? JSON_READ_DEFAULTS.maxDepth
    this.#maxNodes = options.maxNodes ?? JSON_READ_DEFAULTS.maxNodes
    if (build && options.numberLiteralsOf !== undefined) this.literals = new WeakMap()
  }

  document(): unknown {
    this.ws()
    if (this.i >= this.s.length) this.fail('syntax', 'no value')
    const value = this.value(0, undefined)
    this.ws()
    if (this.i !== this.s.length) this.fail('syntax', 'unexpected data after the value')
    return value
  }

  fail(kind: JsonProblemKind, detail: string): never {
    throw new JsonReadError(kind, this.i, detail)
  }

  ws(): void {
    const s = this.s
    let i = this.i
    for (;;) {
      const c = s.charCodeAt(i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++
      else break
    }
    this.i = i
  }

  /** One value; `member` is the name it is held under (a key span), for the member-scoped options. */
  value(depth: number, member: [number, number] | undefined): unknown {
    if (++this.nodes > this.#maxNodes) this.fail('limit', `the JSON holds more than ${this.#maxNodes} values`)
    const c = this.s.charCodeAt(this.i)
    if (c === 0x7b /* { */) return this.object(depth + 1, member)
    if (c === 0x5b /* [ */) return this.array(depth + 1, member)
    if (c === QUOTE) return this.string(depth, false)
    if (c === 0x74 /* t */) return this.literal('true', true)
    if (c === 0x66 /* f */) return this.literal('false', false)
    if (c === 0x6e /* n */) return this.literal('null', null)
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return this.number(member)
    return this.fail('syntax', Number.isNaN(c) ? 'unexpected end of the text' : `unexpected character ${JSON.stringify(this.s[this.i])}`)
  }

  literal<T>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail('syntax', `expected ${word}`)
    this.i += word.length
    return v
  }

  number(member: [number, number] | undefined): number | bigint | undefined {
    const s = this.s
    const start = this.i
    this.numberStart = start
    let i = start
    if (s.charCodeAt(i) === 0x2d) i++
    const first = s.charCodeAt(i)
    if (first === 0x30) i++
    else if (first >= 0x31 && first <= 0x39) while (isDigit(s.charCodeAt(i))) i++
    else {
      this.i = i
      this.fail('syntax', 'expected a digit')
    }
    let integer = true
    if (s.charCodeAt(i) === 0x2e /* . */) {
      integer = false
      i++
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i
        this.fail('syntax', 'expected a digit after the decimal point')
      }
      while (isDigit(s.charCodeAt(i))) i++
    }
    const e = s.charCodeAt(i)
    if (e === 0x65 || e === 0x45) {
      integer = false
      i++
      const sign = s.charCodeAt(i)
      if (sign === 0x2b || sign === 0x2d) i++
      if (!isDigit(s.charCodeAt(i))) {
        this.i = i
        this.fail('syntax', 'expected a digit in the exponent')
      }
      while (isDigit(s.charCodeAt(i))) i++
    }
    this.i = i
    // 16+ digits (sign aside) is where an integer may stop being exact in a double
    const long = integer && i - start - (s.charCodeAt(start) === 0x2d ? 1 : 0) >= 16
    let exactValue: bigint | undefined
    if (long) {
      const n = Number(s.slice(start, i))
      if (!Number.isSafeInteger(n)) {
        this.sawLongInteger = true
        if (this.build && this.options.bigIntegers === 'bigint') exactValue = BigInt(s.slice(start, i))
      }
    }
    if (member !== undefined && this.options.numberLiteralsOf !== undefined && (!integer || long) && this.isMember(member, this.options.numberLiteralsOf)) {
      // a short integer is exact as a double already; only the others need their literal
      this.sawWantedLiteral = true
    }
    if (!this.build) return undefined
    return exactValue ?? Number(s.slice(start, i))
  }

  /** A string value (or member name); validates escapes, control characters and surrogate pairing. */
  string(depth: number, isKey: boolean, want = this.build): string | undefined {
    const s = this.s
    const start = this.i
    let i = start + 1
    let escaped = false
    for (;;) {
      const c = s.charCodeAt(i)
      if (c === QUOTE) break
      if (c === BACKSLASH) {
        escaped = true
        const next = s.charCodeAt(i + 1)
        if (next === 0x75 /* u */) {
          const unit = hex4(s, i + 2)
          if (unit < 0) {
            this.i = i
            this.fail('syntax', 'bad \\u escape')
          }
          if (unit >= 0xd800 && unit <= 0xdbff) {
            // a high surrogate must be followed at once by an escaped low one
            const low = s.charCodeAt(i + 6) === BACKSLASH && s.charCodeAt(i + 7) === 0x75 ? hex4(s, i + 8) : -1
            if (low < 0xdc00 || low > 0xdfff) this.loneSurrogate(depth, isKey, i)
            i += 12
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            this.loneSurrogate(depth, isKey, i)
          } else i += 6
          continue
        }
        if (next === QUOTE || next === BACKSLASH || next === 0x2f || next === 0x62 || next === 0x66 || next === 0x6e || next === 0x72 || next === 0x74) {
          i += 2
          continue
        }
        this.i = i
        this.fail('syntax', Number.isNaN(next) ? 'unterminated string' : 'bad escape')
      }
      if (c < 0x20 || Number.isNaN(c)) {
        this.i = i
        this.fail('syntax', Number.isNaN(c) ? 'unterminated string' : 'control character in a string')
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        // raw surrogates only arrive in a JS string handed in directly (UTF-8 decoding yields U+FFFD)
        const low = s.charCodeAt(i + 1)
        if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) this.loneSurrogate(depth, isKey, i)
        i += 2
        continue
      }
      i++
    }
    this.i = i + 1
    if (!want) return undefined
    return escaped ? (JSON.parse(s.slice(start, i + 1)) as string) : s.slice(start + 1, i)
  }

  array(depth: number, member: [number, number] | undefined): unknown[] | undefined {
    if (depth > this.#maxDepth) this.fail('limit', `the JSON nests deeper than ${this.#maxDepth} levels`)
    this.i++
    const out: unknown[] | undefined = this.build ? [] : undefined
    // depth 2 is a top-level member's value
    const spans = depth === 2 && this.options.rawElementsOf !== undefined && member !== undefined && this.isMember(member, this.options.rawElementsOf) ? [] : undefined
    if (spans !== undefined) this.rawSpans = spans as [number, number][]
    this.ws()
    if (this.s.charCodeAt(this.i) === 0x5d /* ] */) {
      this.i++
      return out
    }
    for (let index = 0; ; index++) {
      this.#index[depth] = index
      this.#keyStart[depth] = -1
      this.ws()
      const start = this.i
      const v = this.value(depth, undefined)
      if (out !== undefined) out.push(v)
      if (spans !== undefined) (spans as [number, number][]).push([start, this.i])
      this.ws()
      const c = this.s.charCodeAt(this.i++)
      if (c === 0x5d) return out
      if (c !== 0x2c /* , */) {
        this.i--
        this.fail('syntax', 'expected , or ]')
      }
    }
  }

  object(depth: number, member: [number, number] | undefined): Record<string, unknown> | undefined {
    if (depth > this.#maxDepth) this.fail('limit', `the JSON nests deeper than ${this.#maxDepth} levels`)
    this.i++
    const out: Record<string, unknown> | undefined = this.build ? {} : undefined
    // depth 2 is the inside of a top-level member's object
    const unique = depth === 2 && this.duplicate === undefined && this.options.uniqueMembersIn !== undefined && member !== undefined && this.isMember(member, this.options.uniqueMembersIn) ? new Set<string>() : undefined
    this.ws()
    if (this.s.charCodeAt(this.i) === 0x7d /* } */) {
      this.i++
      return out
    }
    for (;;) {
      this.ws()
      if (this.s.charCodeAt(this.i) !== QUOTE) this.fail('syntax', 'expected a member name')
      const keyStart = this.i
      this.#keyStart[depth] = -1
      const key = this.string(depth - 1, true, this.build || unique !== undefined) as string
      const span: [number, number] = [keyStart, this.i]
      this.#keyStart[depth] = keyStart
      this.#keyEnd[depth] = this.i
      if (unique !== undefined && this.duplicate === undefined) {
        if (unique.has(key)) this.duplicate = key
        unique.add(key)
      }
      this.ws()
      if (this.s.charCodeAt(this.i) !== 0x3a /* : */) this.fail('syntax', 'expected :')
      this.i++
      this.ws()
      const valueStart = this.i
      const v = this.value(depth, span)
      if (depth === 1 && this.options.rawMemberOf !== undefined) this.noteRawMember(span, valueStart)
      if (out !== undefined) {
        // an own data property even for "__proto__", as JSON.parse makes it
        if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
        else out[key] = v
        if (this.literals !== undefined && (typeof v === 'number' || typeof v === 'bigint') && this.isMember(span, this.options.numberLiteralsOf!)) {
          this.literals.set(out, this.s.slice(this.numberStart, this.i))
        }
      }
      this.ws()
      const c = this.s.charCodeAt(this.i++)
      if (c === 0x7d) return out
      if (c !== 0x2c) {
        this.i--
        this.fail('syntax', 'expected , or }')
      }
    }
  }

  /** Records the top-level member's value span when it is `rawMemberOf`, or that none can be trusted. */
  noteRawMember(span: [number, number], valueStart: number): void {
    if (this.rawMember === AMBIGUOUS) return
    const name = this.options.rawMemberOf as string
    let escaped = false
    for (let k = span[0] + 1; k < span[1] - 1 && !escaped; k++) escaped = this.s.charCodeAt(k) === BACKSLASH
    if (escaped) this.rawMember = AMBIGUOUS
    else if (span[1] - span[0] === name.length + 2 && this.s.startsWith(name, span[0] + 1)) {
      this.rawMember = this.rawMember === undefined ? [valueStart, this.i] : AMBIGUOUS
    }
  }

  /** True when the member name spanning `span` (quotes included) is `name`, escapes decoded. */
  isMember(span: [number, number], name: string): boolean {
    const [start, end] = span
    const s = this.s
    if (end - start === name.length + 2 && s.startsWith(name, start + 1)) return true
    let escaped = false
    for (let k = start + 1; k < end - 1 && !escaped; k++) escaped = s.charCodeAt(k) === BACKSLASH
    return escaped && JSON.parse(s.slice(start, end)) === name
  }

  loneSurrogate(depth: number, isKey: boolean, at: number): never {
    this.i = at
    const where = isKey ? `member name in the object at ${this.pointer(depth)}` : `string at ${this.pointer(depth)}`
    return this.fail('i-json', `the ${where} holds a lone surrogate`)
  }

  /** The JSON Pointer of the value being read at `depth` open containers, capped for messages. */
  pointer(depth: number): string {
    let out = ''
    for (let d = 1; d <= depth && out.length <= 200; d++) {
      const keyStart = this.#keyStart[d] ?? -1
      const part = keyStart >= 0 ? (JSON.parse(this.s.slice(keyStart, this.#keyEnd[d])) as string) : String(this.#index[d] ?? 0)
      out += `/${part.replaceAll('~', '~0').replaceAll('/', '~1')}`
    }
    if (out === '') return '/'
    return out.length > 200 ? `${out.slice(0, 200)}…` : out
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

/** The code unit of four hex digits at `at`, or -1. */
function hex4(s: string, at: number): number {
  let v = 0
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(at + k)
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1
    if (d < 0) return -1
    v = v * 16 + d
  }
  return v
}
