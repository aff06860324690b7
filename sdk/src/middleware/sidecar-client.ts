// SidecarClient: the three sidecar calls the middleware makes (spec 02, Endpoints) over a transport
// (undici Pool on Node, fetch on the edge). It checks every answer against its schema before anything
// reads it; anything but a 200 with a valid body is gate_evaluation_failed.
import type { EvaluateResponse, GateHttpRequest, HealthResponse, HttpReceipt, VerifyReceiptResponse } from '../types.js'
import { EvaluationFailedError, SidecarUnavailableError } from '../errors.js'
import { readJson } from '../protocol/json-reader.js'

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
  capability?: string
  approvalId?: string
  nonceId?: string
}

/** Largest sidecar answer read; an evaluate answer is a few KiB. */
export const MAX_SIDECAR_ANSWER_BYTES = 1024 * 1024

/** /gate/verify statuses that mean the sidecar cannot verify right now (with every 5xx). */
const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([404, 408, 429])

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json', accept: 'application/json' })

/** The sidecar calls of the middleware, answers schema-checked. */
export class SidecarClient {
  readonly #transport: SidecarTransport
  readonly #check: SchemaCheck
  readonly #authorization: string | undefined

  /** `sidecarToken`: the control token, sent as a bearer on /gate/evaluate (capability_id lookups). */
  constructor(transport: SidecarTransport, check: SchemaCheck, sidecarToken: string | null = null) {
    this.#transport = transport
    this.#check = check
    this.#authorization = sidecarToken === null ? undefined : `Bearer ${sidecarToken}`
  }

  /** POST /gate/evaluate. */
  async evaluate(request: GateHttpRequest, extra: EvaluateHeaders): Promise<SidecarEvaluation> {
    const headers: Record<string, string> = { ...JSON_HEADERS }
    if (this.#authorization !== undefined) headers.authorization = this.#authorization
    if (extra.capability !== undefined) headers['x-gate-capability'] = extra.capability
    if (extra.approvalId !== undefined) headers['x-gate-approval-id'] = extra.approvalId
    if (extra.nonceId !== undefined) headers['x-gate-execution-nonce'] = extra.nonceId
    const res = await this.#transport.send('POST', '/gate/evaluate', headers, JSON.stringify(request))
    const value = this.#decode(res, 'gate.http.evaluate_response.v1', '/gate/evaluate') as SidecarEvaluation
    const approval = (value as { approval?: unknown }).approval
    if (approval !== undefined && !isApprovalHandle(approval)) throw new EvaluationFailedError('/gate/evaluate: approval is not {approval_id, resume_path}')
    return value
  }

  /** GET /gate/live: liveness and the signer's public key. */
  async live(): Promise<HealthResponse> {
    const res = await this.#transport.send('GET', '/gate/live', { accept: 'application/json' })
    return this.#decode(res, 'gate.http.health.v1', '/gate/live') as HealthResponse
  }

  /** POST /gate/verify. */
  async verify(receipt: HttpReceipt): Promise<VerifyReceiptResponse> {
    const res = await this.#transport.send('POST', '/gate/verify', { ...JSON_HEADERS }, JSON.stringify(receipt))
    // spec 02: these statuses mean "cannot answer now", not "answered wrongly"
    if (UNAVAILABLE_STATUSES.has(res.status) || res.status >= 500) throw new SidecarUnavailableError(res.status, describeErrorBody(res.text))
    return this.#decode(res, 'gate.http.verify_response.v1', '/gate/verify') as VerifyReceiptResponse
  }

  close(): Promise<void> {
    return this.#transport.close()
  }

  #decode(res: TransportResponse, schemaId: string, route: string): unknown {
    if (res.status !== 200) throw new EvaluationFailedError(`${route} answered ${res.status}${describeErrorBody(res.text)}`)
    let value: unknown
    try {
      // the project's one JSON reader: a lying sidecar's deeply nested answer is refused unbuilt
      value = readJson(res.text).value
    } catch (err) {
      throw new EvaluationFailedError(`${route} answered invalid JSON`, err)
    }
    const result = this.#check(schemaId, value)
    if (!result.ok) throw new EvaluationFailedError(`${route} answer fails ${schemaId}: ${result.errors.slice(0, 3).join('; ')}`)
    return value
  }
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
