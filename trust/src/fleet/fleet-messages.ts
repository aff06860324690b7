// The fleet protocol between a sidecar (its fleet client, @gate/sidecar src/fleet/) and trust-control
// (routes/): each message's TypeScript type and its JSON Schema in @gate/schemas (gate.fleet.*.v1).
// Both sides validate what they receive against the schema before they read it (`readFleetMessage`):
// trust-control the requests, the sidecar the answers. Shapes: docs/fleet.md, docs/postgres.md.
import { validate } from '@gate/schemas'
import type { CaptureResult, CapturePlan, CoreReceipt, HttpReceipt } from '@gate/sdk'

/** The row columns an ingested receipt brings beside it (the index columns of the sidecar's store). */
export interface IngestItemColumns {
  tenant?: string | null
  subjectKey?: string | null
  costUnits?: number | null
  costCurrency?: string | null
  attemptedCostUnits?: number | null
  kind?: 'decision' | 'final'
  decisionReceiptId?: string | null
}

/** One receipt of an ingest: an HttpReceipt, or a tool call's core-only receipt with its request id. */
export type IngestRequestItem = IngestItemColumns & ({ receipt: HttpReceipt } | { coreReceipt: CoreReceipt; requestId: string })

/** POST /v1/receipts/ingest (gate.fleet.ingest_request.v1). */
export interface IngestRequest {
  receipts: IngestRequestItem[]
}

/** Its answer (gate.fleet.ingest_response.v1): one result per item, in item order. */
export interface IngestResponse {
  received: number
  stored: number
  duplicates: number
  results: { receiptId: string; seq: number; stored: boolean }[]
}

/** POST /v1/keys/enroll (gate.fleet.enroll_request.v1). */
export interface EnrollRequest {
  publicKey: string
  label: string
}

/** An enrolled key (gate.fleet.enrolled_key.v1); the enrolment's answer says whether it was `created`. */
export interface EnrolledKeyMessage {
  publicKey: string
  label: string
  enrolledAt: number
  created?: boolean
}

/** GET /v1/keys (gate.fleet.key_list.v1). */
export interface KeyListResponse {
  keys: EnrolledKeyMessage[]
}

/** GET /v1/revocations (gate.fleet.revocation_page.v1). */
export interface RevocationPage {
  revocations: { seq: number; capabilityId: string; revokedAt: number }[]
  nextCursor: number
  latestSeq: number
  authorityGeneration: number
  authorityPublicKey: string
}

/**
 * POST /v1/budgets/capture (gate.fleet.capture_request.v1): the kernel's capture plan; `costs` may be
 * absent. `captureId` names the capture (retries count once, a cancel undoes it); `deadlineMs` is how long
 * the sender waits.
 */
export type CaptureRequest = Omit<CapturePlan, 'costs'> & { costs?: CapturePlan['costs']; captureId?: string; deadlineMs?: number }

/** POST /v1/budgets/cancel (gate.fleet.capture_cancel.v1): the capture its sender gave up on. */
export interface CaptureCancelRequest {
  captureId: string
}

/** The answer of POST /v1/budgets/cancel (gate.fleet.capture_cancelled.v1). */
export interface CaptureCancelledMessage {
  captureId: string
  reversed: boolean
}

/** GET and POST /v1/authority (gate.fleet.authority.v1): spec 03's authority block; a rotation adds `previousPublicKey`. */
export interface AuthorityMessage {
  publicKey: string
  generation: number
  rotatedAt: number | null
  trustedPublicKeys: string[]
  trustedKeyCount: number
  previousPublicKey?: string
}

/** Every fleet message by schema id. */
export interface FleetMessages {
  'gate.fleet.ingest_request.v1': IngestRequest
  'gate.fleet.ingest_response.v1': IngestResponse
  'gate.fleet.enroll_request.v1': EnrollRequest
  'gate.fleet.enrolled_key.v1': EnrolledKeyMessage
  'gate.fleet.key_list.v1': KeyListResponse
  'gate.fleet.revocation_page.v1': RevocationPage
  'gate.fleet.capture_request.v1': CaptureRequest
  'gate.fleet.capture_result.v1': CaptureResult
  'gate.fleet.capture_cancel.v1': CaptureCancelRequest
  'gate.fleet.capture_cancelled.v1': CaptureCancelledMessage
  'gate.fleet.authority.v1': AuthorityMessage
}

/** A received message checked against its schema: the typed value, or why it is not one (the first errors). */
export type FleetMessageReading<T> = { ok: true; value: T } | { ok: false; problem: string }

/** Validates `value` against the schema `id` names; never changes it. */
export function readFleetMessage<K extends keyof FleetMessages>(id: K, value: unknown): FleetMessageReading<FleetMessages[K]> {
  const result = validate(id, value)
  if (result.ok) return { ok: true, value: value as FleetMessages[K] }
  // an if/then/else schema adds "must match "else" schema" after the branch's own error, which says it better
  const errors = result.errors.filter(line => !/: must match "(?:then|else)" schema$/.test(line))
  return { ok: false, problem: `not a ${id}: ${errors.slice(0, 3).join('; ')}` }
}
