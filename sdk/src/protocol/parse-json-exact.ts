// JSON.parse turns 9007199254740993 into 9007199254740992 without a word. This reading keeps every
// integer literal outside the safe range as a bigint, so canonical JSON reproduces it exactly; all
// other values come out as JSON.parse would make them. Used for documents whose canonical form must be
// exact (test vectors, stored receipts, `gate receipt verify` input), through the project's one JSON
// reader (json-reader.ts).
import { readJson, type JsonReadOptions } from './json-reader.js'

/** Limits of `parseJsonExact`: a file of many receipts is deeper and larger than a request body. */
export const EXACT_JSON_LIMITS = Object.freeze({ maxDepth: 512, maxNodes: 5_000_000 })

/** Parses JSON text; integers beyond ±(2^53−1) become bigint. Throws `gate_bad_request` on bad JSON. */
export function parseJsonExact(text: string, limits: Pick<JsonReadOptions, 'maxDepth' | 'maxNodes'> = EXACT_JSON_LIMITS): unknown {
  return readJson(text, { ...limits, bigIntegers: 'bigint' }).value
}
