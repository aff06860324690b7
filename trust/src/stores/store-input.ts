// The checks every backend of a store applies before it writes, so the SQLite stores (@gate/sidecar) and
// the PostgreSQL ones (postgres/) refuse the same values with the same errors.
import { parsePublicKey, signingKeyFromBytes, type CapturePlan } from '@gate/sdk'
import { StoreInputError } from '../errors.js'
import type { ListedReceiptInput } from '../ports.js'

/**
 * True when `bytes` are a signing key as authority stores keep one (`signingKeyBytes` of @gate/sdk: an
 * Ed25519 seed as its 32 bytes, a key of any other algorithm as its key file line).
 */
export function isAuthorityKey(bytes: unknown): bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) return false
  try {
    signingKeyFromBytes(bytes)
    return true
  } catch {
    return false
  }
}

/** A copy of an authority key to store, or StoreInputError (naming its length only, never its bytes). */
export function checkAuthorityKey(bytes: unknown): Uint8Array {
  if (!isAuthorityKey(bytes)) throw new StoreInputError('seed', 'a signing key (a 32-byte Ed25519 seed, or a key file line of another algorithm)', bytes instanceof Uint8Array ? bytes : typeof bytes)
  return Uint8Array.from(bytes)
}

const CURRENCY = /^[A-Z]{3}$/

/**
 * Refuses a capture plan with an empty key, a negative or fractional maximum or amount, a bad currency,
 * or one counter twice (each counter is read once, before any is advanced: a repeat would count twice).
 */
export function checkCapturePlan(plan: CapturePlan): void {
  if (typeof plan !== 'object' || plan === null || !Array.isArray(plan.invocations) || !Array.isArray(plan.costs)) throw new StoreInputError('plan', 'an object with invocations and costs', plan)
  const counters = new Set<string>()
  for (const c of plan.invocations) {
    checkKey('owner', c.owner)
    checkKey('key', c.key)
    if (!Number.isSafeInteger(c.max) || c.max < 0) throw new StoreInputError('max', 'a non-negative integer', c.max)
    const id = `${c.owner}\u0000${c.key}`
    if (counters.has(id)) throw new StoreInputError('invocations', 'each counter once', `${c.owner} ${c.key}`)
    counters.add(id)
  }
  const totals = new Set<string>()
  for (const cost of plan.costs) {
    checkKey('owner', cost.owner)
    checkKey('key', cost.key)
    if (typeof cost.currency !== 'string' || !CURRENCY.test(cost.currency)) throw new StoreInputError('currency', 'three uppercase ASCII letters', cost.currency)
    for (const [field, value] of [['units', cost.units], ['maxUnits', cost.maxUnits]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) throw new StoreInputError(field, 'a non-negative integer', value)
    }
    const id = `${cost.owner}\u0000${cost.key}\u0000${cost.currency}`
    if (totals.has(id)) throw new StoreInputError('costs', 'each cost total once', `${cost.owner} ${cost.key} ${cost.currency}`)
    totals.add(id)
  }
}

/** A capture id: 1-128 printable ASCII, no spaces (a sidecar sends a UUID). */
export const CAPTURE_ID = /^[\x21-\x7e]{1,128}$/

/** How long trust-control remembers a capture id (its result for retries, its cancellation), in seconds. */
export const CAPTURE_ID_RETENTION_SECONDS = 900

/** Checks a capture id. */
export function checkCaptureId(captureId: unknown): string {
  if (typeof captureId !== 'string' || !CAPTURE_ID.test(captureId)) throw new StoreInputError('captureId', '1 to 128 printable ASCII characters', captureId)
  return captureId
}

function checkKey(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new StoreInputError(field, 'a non-empty string', value)
}

const LABEL = /^[\x21-\x7e][\x20-\x7e]{0,127}$/

/** Refuses a key or label the table would not hold: keys as receipts write `kernel_key`, of any algorithm (spec 02/03 wire forms). */
export function checkEnrolment(publicKey: unknown, label: unknown): void {
  if ('error' in parsePublicKey(publicKey)) throw new StoreInputError('publicKey', 'a public key in a wire form (Ed25519 hex, p256:, p384: or hybrid:)', publicKey)
  if (typeof label !== 'string' || !LABEL.test(label)) throw new StoreInputError('label', '1-128 printable ASCII characters', label)
}

/**
 * The checked column values of a listed receipt, in the order of the `listed_receipts` columns (kind,
 * receipt_id, timestamp, tenant, capability_id, tool_server, tool_name, session_id, parent_request_id,
 * request_id, json), for either backend's INSERT.
 */
export function listedReceiptValues(input: ListedReceiptInput): (string | number | null)[] {
  if (input.kind !== 'tool' && input.kind !== 'child') throw new StoreInputError('kind', 'tool or child', input.kind)
  if (typeof input.receiptId !== 'string' || input.receiptId === '') throw new StoreInputError('receiptId', 'a non-empty string', input.receiptId)
  if (typeof input.json !== 'string' || input.json === '') throw new StoreInputError('json', 'a non-empty string', input.json)
  return [
    input.kind,
    input.receiptId,
    input.timestamp ?? null,
    input.tenant ?? null,
    input.capabilityId ?? null,
    input.toolServer ?? null,
    input.toolName ?? null,
    input.sessionId ?? null,
    input.parentRequestId ?? null,
    input.requestId ?? null,
    input.json,
  ]
}
