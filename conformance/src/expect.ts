// Assertions the checks share. Each throws a CheckFailure whose message says what was sent, what was
// expected and what came back.
import { canonicalJson } from '@gate/sdk'
import { validate } from '@gate/schemas'
import { fail } from './check.js'
import { snippet, type Evaluation } from './context.js'
import type { HttpAnswer } from './http-client.js'

/** The answer's status is `status`. */
export function expectStatus(res: HttpAnswer, status: number, what: string): void {
  if (res.status !== status) fail(`${what}: expected status ${status}, got ${res.status} ${snippet(res.text)}`)
}

/** spec 02, Transport rule 3: bodies use Content-Type application/json. */
export function expectJsonContentType(res: HttpAnswer, what: string): void {
  const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/json') fail(`${what}: Content-Type is "${res.headers['content-type'] ?? '(none)'}", expected application/json`)
}

/** `value` validates against schema `id` of schemas/v1. */
export function expectSchema(id: string, value: unknown, what: string): void {
  const result = validate(id, value)
  if (!result.ok) fail(`${what}: does not validate against ${id}: ${result.errors.slice(0, 3).join('; ')}`)
}

/** 400 with a gate_bad_request error body (spec 02, Errors). */
export function expectBadRequest(res: HttpAnswer, what: string): void {
  expectStatus(res, 400, what)
  expectJsonContentType(res, what)
  expectSchema('gate.http.error_body.v1', res.json, `${what}: error body`)
  const code = (res.json as { error?: unknown }).error
  if (code !== 'gate_bad_request') fail(`${what}: error code ${String(code)}, expected gate_bad_request`)
}

/** Verdict allow. */
export function expectAllow(e: Evaluation, what: string): void {
  if (e.answer.verdict.verdict !== 'allow') fail(`${what}: expected allow, got ${describeVerdict(e)}`)
}

/** Verdict deny (any guard). */
export function expectDeny(e: Evaluation, what: string): void {
  if (e.answer.verdict.verdict !== 'deny') fail(`${what}: expected deny, got ${describeVerdict(e)}`)
}

/**
 * A capability deny (spec 02): verdict deny from CapabilityGuard, status 403 (or absent, decoded as
 * 403), a failing CapabilityGuard evidence entry.
 */
export function expectCapabilityDeny(e: Evaluation, what: string): void {
  expectDeny(e, what)
  const v = e.answer.verdict as { guard?: unknown; http_status?: unknown; reason?: unknown }
  if (v.guard !== 'CapabilityGuard') fail(`${what}: deny guard is ${String(v.guard)}, expected CapabilityGuard`)
  if (v.http_status !== undefined && v.http_status !== 403) fail(`${what}: deny http_status ${String(v.http_status)}, expected 403`)
  if (typeof v.reason !== 'string' || v.reason === '') fail(`${what}: deny has no reason`)
  const evidence = e.answer.evidence ?? []
  if (!evidence.some(g => g.guard_name === 'CapabilityGuard' && g.verdict === false)) {
    fail(`${what}: evidence has no failing CapabilityGuard entry: ${canonicalJson(evidence)}`)
  }
}

/** A one-line description of an evaluation's verdict. */
export function describeVerdict(e: Evaluation): string {
  const v = e.answer.verdict as { verdict: string; guard?: string; reason?: string; http_status?: number }
  if (v.verdict === 'deny') return `deny by ${v.guard ?? '?'} (${v.http_status ?? 'no status'}): ${v.reason ?? ''}`
  return v.verdict
}
