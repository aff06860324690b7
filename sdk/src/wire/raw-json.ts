// A signed object kept as the exact text it arrived in (spec 03: nested signed objects, the capability
// token and the receipt, are preserved exactly as received and never re-canonicalized by a forwarder).
// The frame encoder writes a RawJson's text in place of a value. The text is checked to be JSON once,
// here; when it is also canonical (RFC 8785) the frame around it stays canonical, and it always is
// when it came from a canonical frame, since canonical form is canonical all the way down. A text that
// is valid but not canonical is written in its canonical form instead (rawText documents the choice).
import { BadRequestError } from '../errors.js'
import { canonicalJson } from '../protocol/canonical-json.js'
import { isCanonicalJsonText } from '../protocol/json-text.js'
import { readJson } from '../protocol/json-reader.js'
import { EXACT_JSON_LIMITS } from '../protocol/parse-json-exact.js'

export class RawJson {
  /** The text as received. */
  readonly text: string
  /** The parsed value (integers beyond double precision as bigint). */
  readonly value: unknown
  #canonical: string | undefined

  /** `value`, when the caller already parsed `text` exactly; otherwise it is parsed here. */
  constructor(text: string, value?: unknown) {
    this.text = text
    this.value = value === undefined ? readJson(text, { ...EXACT_JSON_LIMITS, bigIntegers: 'bigint' }).value : value
    if (typeof this.value !== 'object' || this.value === null || Array.isArray(this.value)) throw new BadRequestError('a raw signed object must be a JSON object')
  }

  /** What a frame carries: the received bytes when they are canonical, else their canonical form. */
  canonicalText(): string {
    this.#canonical ??= isCanonicalJsonText(this.text) ? this.text : canonicalJson(this.value)
    return this.#canonical
  }
}
