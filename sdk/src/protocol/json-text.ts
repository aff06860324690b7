// Reading the structure of a JSON text that JSON.parse has already accepted, without building values:
// where an object's members start and end, and whether the text is exactly the RFC 8785 canonical form
// of what it holds. It lets the middleware check a receipt over the bytes the sidecar sent instead of
// re-serializing the parsed object (http-receipt.ts): for a canonical text the two are the same bytes.
//
// Canonical here means: no whitespace outside strings; object members in strictly ascending order of
// their (escape-free) names; strings escaped as JSON.stringify escapes them (RFC 8785 §3.2.2.2: only
// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and `\u00xx` for the other control characters); numbers as
// ECMAScript writes them (§3.2.2.3); and well-formed UTF-16 throughout (I-JSON). Anything else, and any
// member name holding an escape (rare, and costly to compare exactly), is "not canonical" and the caller
// takes the slow path. The text must be valid JSON: these scanners do not validate, they only read.

/** One member of a JSON object text. */
export interface JsonMember {
  /** The member name as written between its quotes (escapes not decoded). */
  key: string
  /** Index of the name's opening quote. */
  start: number
  /** Index of the value's first character. */
  valueStart: number
  /** Index just past the value. */
  end: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const LBRACE = 0x7b
const RBRACE = 0x7d
const LBRACKET = 0x5b
const RBRACKET = 0x5d
/** Deeper nesting than this is not read here (the slow path handles it). */
const MAX_DEPTH = 64
const NUMBER_CHAR = /[-+.0-9eE]/
/** The `\u00xx` escapes JSON.stringify writes: control characters without a two-character escape. */
const CONTROL_ESCAPE = /^00(?:0[0-7bef]|1[0-9a-f])$/
const SHORT_ESCAPES = new Set(['"', '\\', 'b', 'f', 'n', 'r', 't'])

/**
 * The members of the object `text` holds (whitespace around tokens allowed), or undefined when it is
 * not an object or nests deeper than the scanner reads.
 */
export function jsonObjectMembers(text: string): JsonMember[] | undefined {
  return readTopObject(text, false)
}

/** The members of `text` when it is a canonical JSON object text, else undefined. */
export function canonicalObjectMembers(text: string): JsonMember[] | undefined {
  if (!text.isWellFormed()) return undefined
  return readTopObject(text, true)
}

/** Whether `text` (valid JSON) is exactly the RFC 8785 canonical form of the value it holds. */
export function isCanonicalJsonText(text: string): boolean {
  return text.isWellFormed() && new Reader(text, true).value(0, 0) === text.length
}

function readTopObject(text: string, canonical: boolean): JsonMember[] | undefined {
  const reader = new Reader(text, canonical)
  const members: JsonMember[] = []
  const start = reader.space(0)
  if (text.charCodeAt(start) !== LBRACE) return undefined
  const end = reader.object(start, 0, members)
  return end >= 0 && reader.space(end) === text.length ? members : undefined
}

/** A pass over one text; every method returns the index after what it read, or -1. */
class Reader {
  constructor(
    readonly text: string,
    readonly canonical: boolean,
  ) {}

  space(i: number): number {
    if (this.canonical) return i
    const { text } = this
    for (;;) {
      const c = text.charCodeAt(i)
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i
      i++
    }
  }

  value(i: number, depth: number): number {
    const c = this.text.charCodeAt(i)
    if (c === QUOTE) return this.string(i)
    if (c === LBRACE) return this.object(i, depth + 1, undefined)
    if (c === LBRACKET) return this.array(i, depth + 1)
    if (this.text.startsWith('true', i)) return i + 4
    if (this.text.startsWith('null', i)) return i + 4
    if (this.text.startsWith('false', i)) return i + 5
    return this.number(i)
  }

  object(i: number, depth: number, members: JsonMember[] | undefined): number {
    if (depth > MAX_DEPTH) return -1
    const { text } = this
    i = this.space(i + 1)
    if (text.charCodeAt(i) === RBRACE) return i + 1
    let previous: string | undefined
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return -1
      const start = i
      const keyEnd = this.string(i)
      if (keyEnd < 0) return -1
      const key = text.slice(i + 1, keyEnd - 1)
      if (this.canonical) {
        // UTF-16 code unit order of escape-free names is JavaScript's own string order (RFC 8785 §3.2.3)
        if (key.includes('\\') || (previous !== undefined && !(previous < key))) return -1
        previous = key
      }
      i = this.space(keyEnd)
      if (text.charCodeAt(i) !== COLON) return -1
      const valueStart = this.space(i + 1)
      const end = this.value(valueStart, depth)
      if (end < 0) return -1
      members?.push({ key, start, valueStart, end })
      i = this.space(end)
      const c = text.charCodeAt(i)
      if (c === RBRACE) return i + 1
      if (c !== COMMA) return -1
      i = this.space(i + 1)
    }
  }

  array(i: number, depth: number): number {
    if (depth > MAX_DEPTH) return -1
    const { text } = this
    i = this.space(i + 1)
    if (text.charCodeAt(i) === RBRACKET) return i + 1
    for (;;) {
      const end = this.value(i, depth)
      if (end < 0) return -1
      i = this.space(end)
      const c = text.charCodeAt(i)
      if (c === RBRACKET) return i + 1
      if (c !== COMMA) return -1
      i = this.space(i + 1)
    }
  }

  string(i: number): number {
    const { text } = this
    let from = i + 1
    for (;;) {
      const close = text.indexOf('"', from)
      if (close < 0) return -1
      let b = close - 1
      while (text.charCodeAt(b) === BACKSLASH) b--
      // an odd run of backslashes escapes the quote
      if ((close - 1 - b) % 2 === 1) {
        from = close + 1
        continue
      }
      if (this.canonical && !hasCanonicalEscapes(text, i + 1, close)) return -1
      return close + 1
    }
  }

  number(i: number): number {
    const { text } = this
    let end = i
    while (end < text.length && NUMBER_CHAR.test(text[end] as string)) end++
    if (end === i) return -1
    if (this.canonical) {
      const written = text.slice(i, end)
      // RFC 8785 §3.2.2.3: the number as ECMAScript's Number.prototype.toString writes it (so no -0,
      // no 1.0, no 1e2, and no integer a double cannot hold exactly)
      if (String(Number(written)) !== written) return -1
    }
    return end
  }
}

function hasCanonicalEscapes(text: string, from: number, to: number): boolean {
  let k = text.indexOf('\\', from)
  while (k >= 0 && k < to) {
    const e = text[k + 1] as string
    if (SHORT_ESCAPES.has(e)) k += 2
    else if (e === 'u' && CONTROL_ESCAPE.test(text.slice(k + 2, k + 6))) k += 6
    else return false
    k = text.indexOf('\\', k)
  }
  return true
}
