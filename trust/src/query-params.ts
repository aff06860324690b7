// Strict query-string parsing for the /v1 read routes (spec 03): every parameter is known to the
// route, appears once and is well-formed, or the request answers 400 naming it. Unsigned integers are
// parsed as bigint first, so a value beyond 2^53 is compared exactly instead of being rounded.
import { DuplicateQueryKeyError, InvalidQueryParameterError, UnknownQueryParameterError } from './errors.js'

/** Largest u64. */
export const U64_MAX = (1n << 64n) - 1n

const U64_TEXT = /^[0-9]{1,20}$/
const CURRENCY = /^[A-Z]{3}$/
/** Hex Ed25519 public key (and the P-256 / P-384 wire forms Gate signers use). */
export const SUBJECT_KEY = /^(?:[0-9a-f]{64}|p256:04[0-9a-f]{128}|p384:04[0-9a-f]{192})$/
const MAX_TEXT_LENGTH = 1024
const OUTCOMES: ReadonlySet<string> = new Set(['allow', 'deny', 'cancelled', 'incomplete'])

/** The route's parameters, each at most once; throws 400 on unknown names or repeated keys. */
export function readQueryParameters(url: URL, allowed: readonly string[]): Map<string, string> {
  const values = new Map<string, string>()
  const unknown: string[] = []
  for (const [key, value] of url.searchParams) {
    if (!allowed.includes(key)) {
      if (!unknown.includes(key)) unknown.push(key)
      continue
    }
    if (values.has(key)) throw new DuplicateQueryKeyError(key)
    values.set(key, value)
  }
  if (unknown.length > 0) throw new UnknownQueryParameterError(unknown)
  return values
}

/** A u64 value exactly (spec 03: u64 parameters), or undefined when absent. */
export function readU64(values: Map<string, string>, name: string): bigint | undefined {
  const text = values.get(name)
  if (text === undefined) return undefined
  if (!U64_TEXT.test(text)) throw new InvalidQueryParameterError(name, 'an unsigned integer', text)
  const value = BigInt(text)
  if (value > U64_MAX) throw new InvalidQueryParameterError(name, `an unsigned integer at most ${U64_MAX}`, text)
  return value
}

/** A non-empty string of at most 1024 characters, or undefined when absent. */
export function readText(values: Map<string, string>, name: string): string | undefined {
  const text = values.get(name)
  if (text === undefined) return undefined
  if (text === '' || text.length > MAX_TEXT_LENGTH) throw new InvalidQueryParameterError(name, `a non-empty string of at most ${MAX_TEXT_LENGTH} characters`, text)
  return text
}

export function readOutcome(values: Map<string, string>, name: string): 'allow' | 'deny' | 'cancelled' | 'incomplete' | undefined {
  const text = values.get(name)
  if (text === undefined) return undefined
  if (!OUTCOMES.has(text)) throw new InvalidQueryParameterError(name, 'one of allow, deny, cancelled, incomplete', text)
  return text as 'allow' | 'deny' | 'cancelled' | 'incomplete'
}

export function readCurrency(values: Map<string, string>, name: string): string | undefined {
  const text = values.get(name)
  if (text === undefined) return undefined
  if (!CURRENCY.test(text)) throw new InvalidQueryParameterError(name, 'three uppercase ASCII letters', text)
  return text
}

export function readSubjectKey(values: Map<string, string>, name: string): string | undefined {
  const text = values.get(name)
  if (text === undefined) return undefined
  if (!SUBJECT_KEY.test(text)) throw new InvalidQueryParameterError(name, 'a hex-encoded Ed25519 public key (64 lowercase hex characters)', text)
  return text
}

/** A usize limit clamped to [min, max] (spec 03: clamped, not refused), `fallback` when absent. */
export function readClamped(values: Map<string, string>, name: string, min: number, max: number, fallback: number): number {
  const value = readU64(values, name)
  if (value === undefined) return fallback
  if (value < BigInt(min)) return min
  if (value > BigInt(max)) return max
  return Number(value)
}

/** `hour` (3600 s) or `day` (86400 s), default `day`. */
export function readTimeBucket(values: Map<string, string>, name: string): { name: 'hour' | 'day'; seconds: number } {
  const text = values.get(name)
  if (text === undefined || text === 'day') return { name: 'day', seconds: 86400 }
  if (text === 'hour') return { name: 'hour', seconds: 3600 }
  throw new InvalidQueryParameterError(name, 'hour or day', text)
}

/**
 * A u64 lower bound as a JavaScript number. Stored values are safe integers, so a bound above 2^53 − 1
 * matches nothing: `impossible` is then true (the caller answers an empty result, never a rounded one).
 */
export function lowerBound(value: bigint | undefined): { value?: number; impossible: boolean } {
  if (value === undefined) return { impossible: false }
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) return { impossible: true }
  return { value: Number(value), impossible: false }
}

/** A u64 upper bound as a number: above 2^53 − 1 it excludes nothing stored, so it is dropped. */
export function upperBound(value: bigint | undefined): number | undefined {
  if (value === undefined || value > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
  return Number(value)
}

/** A bigint that fits a JSON number exactly stays a number; beyond 2^53 it stays a bigint (canonical JSON writes it exactly). */
export function exactNumber(value: bigint | undefined): number | bigint | null {
  if (value === undefined) return null
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value
}
