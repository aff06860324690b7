// SidecarClient: the three sidecar calls the middleware makes (spec 02, Endpoints) over a transport
// (undici Pool on Node, fetch on the edge). It checks every answer against its schema before anything
// reads it; anything but a 200 with a valid body is gate_evaluation_failed.
import type { EvaluateResponse, GateHttpRequest, HealthResponse, HttpReceipt, VerifyReceiptResponse } from '../types.js'
import { EvaluationFailedError, SidecarUnavailableError } from '../errors.js'
import { readJson, type JsonReadOptions, type JsonReadResult } from '../protocol/json-reader.js'
import { APPROVAL_ID_HEADER, CAPABILITY_HEADER, EXECUTION_NONCE_HEADER } from './gate-headers.js'

/** A sidecar answer: status and body text. */
export interface TransportResponse {
  status: number
  text: string
}

/**
 * One HTTP exchange with the sidecar. Implementations enforce the deadline over headers and body,
 * cap the answer's size, and reject only with SidecarUnreachableError, SidecarTimeoutError or
 * EvaluationFailedError.
 */
export interface SidecarTransport {
  send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<TransportResponse>
  close(): Promise<void>
}

/** Validates a value against a schema id (`@gate/schemas` on Node, its precompiled validators on the edge). */
export type SchemaCheck = (schemaId: string, value: unknown) => { ok: true } | { ok: false; errors: readonly string[] }

/** EvaluateResponse plus the additive `approval` member of a pending approval. */
export interface SidecarEvaluation extends EvaluateResponse {
  approval?: { approval_id: string; resume_path: string }
}

/** The Gate headers of one evaluate call. */
export interface EvaluateHeaders {
  /** The capability token text (header or query); sent in X-Gate-Capability, base64url when not header-safe. */
  capability?: string | undefined
  approvalId?: string | undefined
  nonceId?: string | undefined
  /** `traceparent` (and `tracestate`) of the trace the call continues (trace-context.ts). */
  trace?: Record<string, string> | undefined
}

/** An evaluate answer, schema-checked, with the text of its receipt as the sidecar sent it. */
export interface SidecarAnswer {
  value: SidecarEvaluation
  /** The receipt's JSON text, byte for byte (what `value.receipt` was parsed from); undefined when it cannot be told apart. */
  receiptText: string | undefined
}

/** Largest sidecar answer read; an evaluate answer is a few KiB. */
export const MAX_SIDECAR_ANSWER_BYTES = 1024 * 1024

/** /gate/verify statuses that mean the sidecar cannot verify right now (with every 5xx). */
const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([404, 408, 429])

const JSON_HEADERS: Record<string, string> = Object.freeze({ 'content-type': 'application/json', accept: 'application/json' })
const HEADER_SAFE = /^[\x21-\x7e]+$/
/** Read the evaluate answer once: its value and the `receipt` member's source text. */
const RECEIPT_MEMBER: JsonReadOptions = Object.freeze({ rawMemberOf: 'receipt' })

/** The sidecar calls of the middleware, answers schema-checked. */
export class SidecarClient {
  readonly #transport: SidecarTransport
  readonly #check: SchemaCheck
  /** The headers of every evaluate call: JSON, and the control token as a bearer when one is given. */
  readonly #evaluateHeaders: Record<string, string>

  /** `sidecarToken`: the control token, sent as a bearer on /gate/evaluate (capability_id lookups). */
  constructor(transport: SidecarTransport, check: SchemaCheck, sidecarToken: string | null = null) {
    this.#transport = transport
    this.#check = check
    this.#evaluateHeaders = sidecarToken === null ? JSON_HEADERS : Object.freeze({ ...JSON_HEADERS, authorization: `Bearer ${sidecarToken}` })
  }

  /** POST /gate/evaluate. */
  async evaluate(request: GateHttpRequest, extra: EvaluateHeaders): Promise<SidecarAnswer> {
    let headers: Record<string, string> = this.#evaluateHeaders
    if (extra.capability !== undefined || extra.approvalId !== undefined || extra.nonceId !== undefined || extra.trace !== undefined) {
      headers = { ...this.#evaluateHeaders, ...extra.trace }
      if (extra.capability !== undefined) headers[CAPABILITY_HEADER] = toHeaderValue(extra.capability.trim())
      if (extra.approvalId !== undefined) headers[APPROVAL_ID_HEADER] = extra.approvalId
      if (extra.nonceId !== undefined) headers[EXECUTION_NONCE_HEADER] = extra.nonceId
    }
    const res = await this.#transport.send('POST', '/gate/evaluate', headers, JSON.stringify(request))
    // one read yields the value and the receipt's source text (the bytes its id and signature cover)
    const read = this.#decode(res, 'gate.http.evaluate_response.v1', '/gate/evaluate', RECEIPT_MEMBER)
    const value = read.value as SidecarEvaluation
    const approval = (value as { approval?: unknown }).approval
    if (approval !== undefined && !isApprovalHandle(approval)) throw new EvaluationFailedError('/gate/evaluate: approval is not {approval_id, resume_path}')
    return { value, receiptText: read.rawMember }
  }

  /** GET /gate/live: liveness and the signer's public key. */
  async live(): Promise<HealthResponse> {
    const res = await this.#transport.send('GET', '/gate/live', { accept: 'application/json' })
    return this.#decode(res, 'gate.http.health.v1', '/gate/live').value as HealthResponse
  }

  /** POST /gate/verify. */
  async verify(receipt: HttpReceipt): Promise<VerifyReceiptResponse> {
    const res = await this.#transport.send('POST', '/gate/verify', JSON_HEADERS, JSON.stringify(receipt))
    // spec 02: these statuses mean "cannot answer now", not "answered wrongly"
    if (UNAVAILABLE_STATUSES.has(res.status) || res.status >= 500) throw new SidecarUnavailableError(res.status, describeErrorBody(res.text))
    return this.#decode(res, 'gate.http.verify_response.v1', '/gate/verify').value as VerifyReceiptResponse
  }

  close(): Promise<void> {
    return this.#transport.close()
  }

  #decode(res: TransportResponse, schemaId: string, route: string, options?: JsonReadOptions): JsonReadResult {
    if (res.status !== 200) throw new EvaluationFailedError(`${route} answered ${res.status}${describeErrorBody(res.text)}`)
    let read: JsonReadResult
    try {
      // the project's one JSON reader: a lying sidecar's deeply nested answer is refused unbuilt
      read = readJson(res.text, options)
    } catch (err) {
      throw new EvaluationFailedError(`${route} answered invalid JSON`, err)
    }
    const result = this.#check(schemaId, read.value)
    if (!result.ok) throw new EvaluationFailedError(`${route} answer fails ${schemaId}: ${result.errors.slice(0, 3).join('; ')}`)
    return read
  }
}

/** The sidecar accepts the token's JSON or base64url of it; a query-decoded JSON token may not fit a header. */
function toHeaderValue(token: string): string {
  if (HEADER_SAFE.test(token.replace(/ /g, '!'))) return token
  return base64url(new TextEncoder().encode(token))
}

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function isApprovalHandle(v: unknown): boolean {
  const a = v as { approval_id?: unknown; resume_path?: unknown }
  return typeof v === 'object' && v !== null && typeof a.approval_id === 'string' && a.approval_id !== '' && typeof a.resume_path === 'string' && /^\/approvals\/[^/]+\/respond$/.test(a.resume_path)
}

/** The sidecar's own error code and message, for the log-facing message (never its raw body). */
function describeErrorBody(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown }
    if (typeof body.error === 'string') return ` ${body.error}${typeof body.message === 'string' ? ` (${body.message.slice(0, 200)})` : ''}`
  } catch {
    // not JSON: the status says enough
  }
  return ''
}
