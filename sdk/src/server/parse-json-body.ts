// Decodes a request body as JSON the way every Gate route needs it: UTF-8, then the project's one
// strict reader (protocol/json-reader.ts): RFC 8259 grammar, depth and node-count limits answered
// before anything is built, and I-JSON (RFC 7493), which RFC 8785 requires of anything Gate
// canonicalizes. JSON.parse accepts a `\ud800` escape and yields a lone surrogate, which no receipt or
// token can then be signed over: caught here, such a body is the client's 400 instead of an
// evaluation failure (500) further in.
import { JsonReadError, readJson, type JsonReadOptions, type JsonReadResult } from '../protocol/json-reader.js'

/** The decoded value (and what else was asked for), or why the body is not acceptable JSON (a sentence). */
export type JsonBodyResult = ({ ok: true } & JsonReadResult) | { ok: false; problem: string }

export function parseJsonBody(body: Buffer | string, options: JsonReadOptions = {}): JsonBodyResult {
  const text = typeof body === 'string' ? body : body.toString('utf8')
  try {
    return { ok: true, ...readJson(text, options) }
  } catch (err) {
    // same package, one copy: instanceof is safe here
    if (!(err instanceof JsonReadError)) throw err
    if (err.kind === 'i-json') return { ok: false, problem: `body is not I-JSON (RFC 7493): ${err.detail}` }
    if (err.kind === 'limit') return { ok: false, problem: `body refused: ${err.detail}` }
    return { ok: false, problem: `body is not valid JSON: ${err.detail} (offset ${err.offset})` }
  }
}
