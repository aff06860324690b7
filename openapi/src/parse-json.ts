// JSON text → tree, keeping `x-gate-budget-limit` exact. JSON.parse turns 18446744073709551615 into
// 18446744073709552000 and Node 20 has no reviver source access, so budget literals that are not safe
// integers are found in the text, parsed exactly, and attached to their holder object. Documents
// without such a literal (all real ones measured) take the plain JSON.parse path at full speed.
import { randomUUID } from 'node:crypto'
import { OpenApiError } from './errors.js'
import { BUDGET_LIMIT_KEY } from './read-extensions.js'
import type { ParsedTree } from './types.js'

const KEY_TOKEN = `"${BUDGET_LIMIT_KEY}"`
// An optionally signed run of at most 15 digits is always a safe integer: no exact parse needed.
const SMALL_INTEGER = /^-?\d{1,15}$/
const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// Any integer past 10^20 is beyond 2^64 - 1; capping the exponent keeps `1e999999999` from
// building a gigantic BigInt.
const OUT_OF_RANGE = 1n << 65n

/** Parses JSON (after a leading BOM) into a tree; a syntax error is `InvalidJson` with line and column. */
export function parseJsonText(text: string): ParsedTree {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const exactBudgets = new WeakMap<object, bigint | null>()
  let root: unknown
  try {
    root = JSON.parse(source)
  } catch (err) {
    throw toInvalidJson(source, err)
  }
  if (!source.includes(KEY_TOKEN)) return { root, exactBudgets }
  const literals = findInexactBudgetLiterals(source)
  if (literals.length === 0) return { root, exactBudgets }
  return { root: parseWithExactBudgets(source, literals, exactBudgets), exactBudgets }
}

interface Span {
  start: number
  end: number
}

// Valid JSON (already checked by JSON.parse) guarantees that `"x-gate-budget-limit"` preceded by an
// even number of backslashes is a string token of its own: inside a string its quotes would be escaped.
function findInexactBudgetLiterals(text: string): Span[] {
  const spans: Span[] = []
  let from = 0
  for (;;) {
    const at = text.indexOf(KEY_TOKEN, from)
    if (at === -1) return spans
    from = at + KEY_TOKEN.length
    let backslashes = 0
    for (let k = at - 1; k >= 0 && text.charCodeAt(k) === 0x5c; k--) backslashes++
    if (backslashes % 2 === 1) continue
    let i = skipWhitespace(text, from)
    if (text.charCodeAt(i) !== 0x3a /* : */) continue
    i = skipWhitespace(text, i + 1)
    const start = i
    while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
    if (i === start || SMALL_INTEGER.test(text.slice(start, i))) continue
    spans.push({ start, end: i })
  }
}

function parseWithExactBudgets(text: string, spans: Span[], exactBudgets: WeakMap<object, bigint | null>): unknown {
  // A per-parse random marker cannot be forged by a string already in the document.
  const marker = `\u0000gate-budget:${randomUUID()}:`
  const literals = new Map<string, string>()
  let rewritten = ''
  let last = 0
  spans.forEach((span, i) => {
    const literal = text.slice(span.start, span.end)
    literals.set(marker + i, literal)
    rewritten += text.slice(last, span.start) + JSON.stringify(marker + i)
    last = span.end
  })
  rewritten += text.slice(last)
  return JSON.parse(rewritten, function (this: unknown, key: string, value: unknown) {
    if (key !== BUDGET_LIMIT_KEY || typeof value !== 'string') return value
    const literal = literals.get(value)
    if (literal === undefined) return value
    exactBudgets.set(this as object, exactInteger(literal))
    return Number(literal)
  })
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

function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i
    i++
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45
}

function toInvalidJson(text: string, err: unknown): OpenApiError {
  const message = err instanceof Error ? err.message : String(err)
  const position = /at position (\d+)/.exec(message)
  if (position === null) return new OpenApiError('InvalidJson', 'document', message, err)
  const offset = Number(position[1])
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  const column = offset - before.lastIndexOf('\n')
  return new OpenApiError('InvalidJson', `line ${line}, column ${column}`, message, err)
}
