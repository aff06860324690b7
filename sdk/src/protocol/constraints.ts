// Grant constraints (spec 03: the Constraint enum has 27 variants; the portable matcher decides 8 from
// call arguments and refuses the other 19 by name). Wire shape: `{"type": "<variant>", "value": ...}`,
// the variant in snake_case and `value` absent for a variant without data (docs/capabilities.md).
// A constraint narrows a grant; one Gate cannot decide must never be read as satisfied, so every
// outcome other than "satisfied" makes the grant unusable for the call.
import { canonicalJson } from './canonical-json.js'

/** Decided from the call's arguments alone. */
export const PORTABLE_CONSTRAINTS = Object.freeze([
  'path_prefix',
  'domain_exact',
  'domain_glob',
  'max_length',
  'max_args_size',
  'custom',
  'audience_allowlist',
  'memory_store_allowlist',
] as const)

/** Need state Gate does not have (an intent, an approval token, attestation, SQL or output inspection, a regex engine's semantics): refused by name. */
export const REFUSED_CONSTRAINTS = Object.freeze([
  'regex_match',
  'governed_intent_required',
  'require_approval_above',
  'require_cumulative_approval_above',
  'seller_exact',
  'minimum_runtime_assurance',
  'minimum_autonomy_tier',
  'table_allowlist',
  'column_denylist',
  'max_rows_returned',
  'operation_class',
  'content_review_tier',
  'max_transaction_amount_usd',
  'require_dual_approval',
  'model_constraint',
  'memory_write_deny_patterns',
  'output_digest_sha256',
  'require_finding_purchase',
  'require_finding_recovery',
] as const)

export type PortableConstraint = (typeof PORTABLE_CONSTRAINTS)[number]
export type RefusedConstraint = (typeof REFUSED_CONSTRAINTS)[number]

/** Why a constraint does not let a call through. */
export type ConstraintFailureCode = 'constraint_unsatisfied' | 'constraint_refused' | 'constraint_malformed' | 'arguments_unavailable'

export type ConstraintOutcome = { ok: true } | { ok: false; code: ConstraintFailureCode; reason: string }

const SATISFIED: ConstraintOutcome = Object.freeze({ ok: true })
const PORTABLE: ReadonlySet<string> = new Set(PORTABLE_CONSTRAINTS)
const REFUSED: ReadonlySet<string> = new Set(REFUSED_CONSTRAINTS)
const PATH_KEYS = new Set(['file', 'filename', 'dir', 'directory', 'folder', 'root', 'cwd'])
const AUDIENCE_KEYS = new Set(['recipient', 'recipients', 'audience', 'to', 'cc', 'bcc', 'channel', 'channels'])
const MEMORY_STORE_KEYS = new Set(['store', 'memory_store', 'collection', 'namespace'])
const encoder = new TextEncoder()
const utf8Length = (s: string) => encoder.encode(s).length

/**
 * Decides one constraint for a call. `args` undefined means Gate cannot see every argument of the call
 * (an HTTP body it was not given): no portable constraint is decided then.
 */
export function checkConstraint(constraint: unknown, args: Record<string, unknown> | undefined): ConstraintOutcome {
  const parsed = parseConstraint(constraint)
  if ('problem' in parsed) return fail('constraint_malformed', parsed.problem)
  const { type, value } = parsed
  if (REFUSED.has(type)) return fail('constraint_refused', `constraint ${type} cannot be decided from call arguments, so this grant is not usable here`)
  if (!PORTABLE.has(type)) return fail('constraint_refused', `unknown constraint ${type}`)
  const problem = valueProblem(type as PortableConstraint, value)
  if (problem !== undefined) return fail('constraint_malformed', `constraint ${type}: ${problem}`)
  if (args === undefined) return fail('arguments_unavailable', `constraint ${type} needs every argument of the call, and Gate cannot see all of them (a request body it was not given)`)
  const failure = decide(type as PortableConstraint, value, args)
  return failure === undefined ? SATISFIED : fail('constraint_unsatisfied', `constraint ${type}: ${failure}`)
}

/** The variant name of a constraint object, or undefined when it has none. */
export function constraintType(constraint: unknown): string | undefined {
  const t = (constraint as { type?: unknown } | null)?.type
  return typeof t === 'string' ? t : undefined
}

function fail(code: ConstraintFailureCode, reason: string): ConstraintOutcome {
  return { ok: false, code, reason }
}

function parseConstraint(c: unknown): { type: string; value: unknown } | { problem: string } {
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return { problem: 'a constraint must be an object {type, value}' }
  const keys = Object.keys(c)
  const type = (c as { type?: unknown }).type
  if (typeof type !== 'string' || type === '') return { problem: 'a constraint needs a "type" string' }
  const extra = keys.find(k => k !== 'type' && k !== 'value')
  if (extra !== undefined) return { problem: `constraint ${type} has a member "${extra}" this verifier does not understand` }
  return { type, value: (c as { value?: unknown }).value }
}

function valueProblem(type: PortableConstraint, value: unknown): string | undefined {
  switch (type) {
    case 'path_prefix':
    case 'domain_exact':
    case 'domain_glob':
      return typeof value === 'string' && value !== '' ? undefined : 'value must be a non-empty string'
    case 'max_length':
    case 'max_args_size':
      return Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'value must be a non-negative integer'
    case 'custom':
      return Array.isArray(value) && value.length === 2 && value.every(v => typeof v === 'string') && value[0] !== '' ? undefined : 'value must be [key, value] strings'
    case 'audience_allowlist':
    case 'memory_store_allowlist':
      return Array.isArray(value) && value.every(v => typeof v === 'string') ? undefined : 'value must be an array of strings'
  }
}

/** Why the arguments do not satisfy a well-formed portable constraint, or undefined. */
function decide(type: PortableConstraint, value: unknown, args: Record<string, unknown>): string | undefined {
  switch (type) {
    case 'path_prefix': {
      const paths = stringLeaves(args).filter(l => isPathKey(l.key) || looksLikePath(l.value))
      if (paths.length === 0) return 'the call names no path'
      const outside = paths.find(l => !isPathUnder(l.value, value as string))
      return outside === undefined ? undefined : `${JSON.stringify(outside.value)} is not under ${JSON.stringify(value)}`
    }
    case 'domain_exact':
    case 'domain_glob': {
      const expected = normalizeDomain(value as string)
      const hosts = domainCandidates(args)
      if (hosts.length === 0) return 'the call names no domain'
      const matches = (h: string) => (type === 'domain_exact' ? h === expected : globMatches(expected, h))
      const other = hosts.find(h => h === null || !matches(h))
      return other === undefined ? undefined : other === null ? 'a URL in the call does not parse' : `domain ${other} is not ${value as string}`
    }
    case 'max_length': {
      const long = stringLeaves(args).find(l => utf8Length(l.value) > (value as number))
      return long === undefined ? undefined : `a value of ${utf8Length(long.value)} bytes exceeds ${value as number}`
    }
    case 'max_args_size': {
      const size = utf8Length(canonicalJson(args))
      return size <= (value as number) ? undefined : `the arguments are ${size} bytes (canonical JSON), more than ${value as number}`
    }
    case 'custom': {
      const [key, expected] = value as [string, string]
      const found = membersNamed(args, k => k === key)
      if (found.length === 0) return `the call has no argument ${key}`
      return found.every(v => v === expected) ? undefined : `argument ${key} is not ${JSON.stringify(expected)}`
    }
    case 'audience_allowlist':
    case 'memory_store_allowlist': {
      const keys = type === 'audience_allowlist' ? AUDIENCE_KEYS : MEMORY_STORE_KEYS
      const named = membersNamed(args, k => keys.has(k.toLowerCase())).flatMap(v => (Array.isArray(v) ? v : [v]))
      if (named.length === 0) return `the call names no ${type === 'audience_allowlist' ? 'audience' : 'memory store'}`
      const allowed = value as string[]
      const other = named.find(v => typeof v !== 'string' || !allowed.includes(v))
      return other === undefined ? undefined : `${JSON.stringify(other)} is not on the allowlist`
    }
  }
}

interface StringLeaf {
  key: string | undefined
  value: string
}

/** Every string value in the arguments, with the object key it sits under (array items inherit it). */
function stringLeaves(value: unknown, key?: string, out: StringLeaf[] = []): StringLeaf[] {
  if (typeof value === 'string') out.push({ key, value })
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, key, out)
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) stringLeaves(v, k, out)
  return out
}

/** The values of every member, at any depth, whose key satisfies `accept`. */
function membersNamed(value: unknown, accept: (key: string) => boolean, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) membersNamed(v, accept, out)
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (accept(k)) out.push(v)
      else membersNamed(v, accept, out)
    }
  }
  return out
}

function isPathKey(key: string | undefined): boolean {
  if (key === undefined) return false
  const k = key.toLowerCase()
  return k.includes('path') || PATH_KEYS.has(k)
}

function looksLikePath(value: string): boolean {
  if (value.includes('://')) return false
  return value.includes('/') || value.includes('\\') || value.startsWith('~') || value === '.' || value === '..'
}

// Segment-wise, after resolving "." and "..": "/data/../etc" is not under "/data", "/database" is not
// under "/data". A value still percent-encoding a dot, slash or backslash is refused: an upstream
// that decodes it once more would read another path than the one checked here.
function isPathUnder(candidate: string, prefix: string): boolean {
  if (/%(?:2e|2f|5c)/i.test(candidate) || candidate.includes('\u0000')) return false
  const c = normalizePath(candidate)
  const p = normalizePath(prefix)
  if (c === undefined || p === undefined || c.absolute !== p.absolute || p.segments.length > c.segments.length) return false
  return p.segments.every((s, i) => c.segments[i] === s)
}

function normalizePath(path: string): { absolute: boolean; segments: string[] } | undefined {
  const segments: string[] = []
  for (const s of path.split(/[/\\]/)) {
    if (s === '' || s === '.') continue
    if (s === '..') {
      if (segments.pop() === undefined) return undefined
      continue
    }
    segments.push(s)
  }
  return { absolute: path.startsWith('/') || path.startsWith('\\'), segments }
}

/** Host names named in string arguments; null for a URL that does not parse (it never satisfies). */
function domainCandidates(args: Record<string, unknown>): (string | null)[] {
  const out: (string | null)[] = []
  for (const { value } of stringLeaves(args)) {
    const v = value.trim()
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
      // a URL: the WHATWG parser's host (userinfo, backslashes and IDNA as a client would read them)
      try {
        const host = new URL(v).hostname
        out.push(host === '' ? null : normalizeDomain(host))
      } catch {
        out.push(null)
      }
      continue
    }
    const authority = (v.split(/[/\\?#]/)[0] ?? '').split('@').pop() ?? ''
    const host = normalizeDomain(authority.replace(/:\d*$/, ''))
    if (host === 'localhost' || (host.includes('.') && /^[a-z0-9.-]+$/.test(host))) out.push(host)
  }
  return out
}

function normalizeDomain(d: string): string {
  return d.trim().replace(/^\.+|\.+$/g, '').toLowerCase()
}

/** `*` matches any run of characters (including none); everything else literally. */
function globMatches(pattern: string, candidate: string): boolean {
  let p = 0
  let c = 0
  let star = -1
  let mark = 0
  while (c < candidate.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++
      mark = c
    } else if (p < pattern.length && pattern[p] === candidate[c]) {
      p++
      c++
    } else if (star >= 0) {
      p = star + 1
      c = ++mark
    } else {
      return false
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++
  return p === pattern.length
}
