// JSON text → tree, keeping `x-gate-budget-limit` exact. JSON.parse turns 18446744073709551615 into
// 18446744073709552000 and Node 20 has no reviver source access, so the project's JSON reader returns
// the source literal of every budget number that is not a short integer, by holder object, and it is
// parsed exactly here. Documents without such a literal (all real ones measured) are built by
// JSON.parse at full speed. The reader's limits bound what a discovered document (an upstream's
// choice, up to 16 MiB) can make this process build.
import { isJsonReadError, readJson } from '@gate/sdk'
import { OpenApiError } from './errors.js'
import { BUDGET_LIMIT_KEY } from './read-extensions.js'
import type { ParsedTree } from './types.js'

/** Limits of a JSON OpenAPI document: far past real ones (deepest seen ~40, largest ~1.5 M values). */
const DOCUMENT_JSON_LIMITS = Object.freeze({ maxDepth: 512, maxNodes: 5_000_000 })

// An optionally signed run of at most 15 digits is always a safe integer: no exact parse needed.
const SMALL_INTEGER = /^-?\d{1,15}$/
const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// Any integer past 10^20 is beyond 2^64 - 1; capping the exponent keeps `1e999999999` from
// building a gigantic BigInt.
const OUT_OF_RANGE = 1n << 65n

/** Parses JSON (after a leading BOM) into a tree; a refused text is `InvalidJson` with line and column. */
export function parseJsonText(text: string): ParsedTree {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const exactBudgets = new WeakMap<object, bigint | null>()
  let read
  try {
    read = readJson(source, { ...DOCUMENT_JSON_LIMITS, numberLiteralsOf: BUDGET_LIMIT_KEY })
  } catch (err) {
    throw toInvalidJson(source, err)
  }
  const literals = read.numberLiterals
  if (literals !== undefined) {
    const record = (holder: unknown): void => {
      if (typeof holder !== 'object' || holder === null) return
      const literal = literals.get(holder)
      if (literal !== undefined && !SMALL_INTEGER.test(literal)) exactBudgets.set(holder, exactInteger(literal))
      for (const child of Object.values(holder)) record(child)
    }
    record(read.value)
  }
  return { root: read.value, exactBudgets }
}

/** The exact integer a JSON number literal denotes, or null when it is not an integer. */
export function exactInteger(literal: string): bigint | null {
  const m = NUMBER_LITERAL.exec(literal)
  if (m === null) return null
  const [, sign, whole = '', fraction = '', exponentText = '0'] = m
  const digits = (whole + fraction).replace(/^0+/, '')
  if (digits === '') return 0n
  const exponent = Number(exponentText) - fraction.length
  let magnitude: bigint
  if (exponent >= 0) {
    if (digits.length + exponent > 21) magnitude = OUT_OF_RANGE
    else magnitude = BigInt(digits) * 10n ** BigInt(exponent)
  } else {
    const cut = -exponent
    if (cut >= digits.length) return null
    if (!/^0*$/.test(digits.slice(digits.length - cut))) return null
    const kept = digits.slice(0, digits.length - cut)
    magnitude = kept.length > 21 ? OUT_OF_RANGE : BigInt(kept)
  }
  return sign === '-' ? -magnitude : magnitude
}

function toInvalidJson(text: string, err: unknown): OpenApiError {
  if (!isJsonReadError(err)) return new OpenApiError('InvalidJson', 'document', err instanceof Error ? err.message : String(err), err)
  const before = text.slice(0, err.offset)
  const line = before.split('\n').length
  const column = err.offset - before.lastIndexOf('\n')
  return new OpenApiError('InvalidJson', `line ${line}, column ${column}`, err.message, err)
}
