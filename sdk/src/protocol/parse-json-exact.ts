// JSON.parse turns 9007199254740993 into 9007199254740992 without a word. This parser keeps every
// integer literal outside the safe range as a bigint, so canonical JSON reproduces it exactly; all
// other values come out as JSON.parse would make them. Used for untrusted documents whose canonical
// form must be exact (test vectors, `gate receipt verify` input), not on the request hot path.
import { BadRequestError } from '../errors.js'

/** Parses JSON text; integers beyond ±(2^53−1) become bigint. Throws `gate_bad_request` on bad JSON. */
export function parseJsonExact(text: string): unknown {
  // Fast path: an integer literal that could lose precision has 16+ digits and, being a JSON value,
  // starts the text or follows `:`, `[` or `,` (and whitespace). Digit runs inside hex strings, common
  // in receipts (hashes, keys, signatures), no longer send the text to the slow parser.
  if (!MAYBE_LONG_INTEGER.test(text)) return parseOrThrow(text)
  const p = new Parser(text)
  p.ws()
  const v = p.value(0)
  p.ws()
  if (p.i !== text.length) p.fail('unexpected data after the JSON value')
  return v
}

const MAYBE_LONG_INTEGER = /(?:^|[:[,])[\x20\t\n\r]*-?\d{16}/

function parseOrThrow(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new BadRequestError(`invalid JSON: ${(err as Error).message}`, err)
  }
}

const MAX_DEPTH = 512
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

class Parser {
  i = 0
  constructor(readonly s: string) {}

  fail(msg: string): never {
    throw new BadRequestError(`invalid JSON at offset ${this.i}: ${msg}`)
  }

  ws(): void {
    const s = this.s
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++
      else break
    }
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep')
    const c = this.s[this.i]
    if (c === '{') return this.object(depth)
    if (c === '[') return this.array(depth)
    if (c === '"') return this.string()
    if (c === 't') return this.literal('true', true)
    if (c === 'f') return this.literal('false', false)
    if (c === 'n') return this.literal('null', null)
    return this.number()
  }

  literal<T>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail(`expected ${word}`)
    this.i += word.length
    return v
  }

  number(): number | bigint {
    NUMBER.lastIndex = this.i
    const m = NUMBER.exec(this.s)
    if (m === null) this.fail('expected a value')
    this.i += m[0].length
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0])
      if (!Number.isSafeInteger(n)) return BigInt(m[0])
      return n
    }
    return Number(m[0])
  }

  string(): string {
    // Find the closing quote, honouring escapes, then let JSON.parse decode the literal.
    const s = this.s
    let j = this.i + 1
    while (j < s.length) {
      const c = s.charCodeAt(j)
      if (c === 0x22) break
      if (c === 0x5c) j += 2
      else j++
    }
    if (j >= s.length) this.fail('unterminated string')
    const lit = s.slice(this.i, j + 1)
    try {
      const v = JSON.parse(lit) as string
      this.i = j + 1
      return v
    } catch {
      return this.fail('bad string literal')
    }
  }

  array(depth: number): unknown[] {
    this.i++
    const out: unknown[] = []
    this.ws()
    if (this.s[this.i] === ']') {
      this.i++
      return out
    }
    for (;;) {
      this.ws()
      out.push(this.value(depth + 1))
      this.ws()
      const c = this.s[this.i++]
      if (c === ']') return out
      if (c !== ',') this.fail('expected , or ]')
    }
  }

  object(depth: number): Record<string, unknown> {
    this.i++
    const out: Record<string, unknown> = {}
    this.ws()
    if (this.s[this.i] === '}') {
      this.i++
      return out
    }
    for (;;) {
      this.ws()
      if (this.s[this.i] !== '"') this.fail('expected a member name')
      const k = this.string()
      this.ws()
      if (this.s[this.i++] !== ':') this.fail('expected :')
      this.ws()
      const v = this.value(depth + 1)
      // Own data property even for "__proto__", as JSON.parse does.
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
      this.ws()
      const c = this.s[this.i++]
      if (c === '}') return out
      if (c !== ',') this.fail('expected , or }')
    }
  }
}
