// The answers the proxy writes itself (spec 01, "HTTP responses of the proxy" and "Proxy error bodies").
// Error bodies go through @gate/sdk's sendError, the one place they are built; this module only picks
// the error, the status and the extra members. Every answer for which a receipt was signed carries
// X-Gate-Receipt-Id with the FINALIZED receipt's id (its metadata names the decision receipt).
import type { ServerResponse } from 'node:http'
import { HTTP_METHODS, isGateError, type Verdict } from '@gate/sdk'
import { sendError, sendJsonText } from '@gate/sdk/server'
import { AccessDeniedError, PendingApprovalError, ProtectError } from './errors.js'

export const RECEIPT_ID_HEADER = 'x-gate-receipt-id'

/** spec 01, 403 denial body: `suggestion`. */
export const CAPABILITY_SUGGESTION =
  'present a valid capability token in the X-Gate-Capability header or the gate_capability query parameter'
/** spec 01: a revoked capability's suggestion says to request a fresh token. */
export const REVOKED_SUGGESTION = 'request a fresh capability token: the presented one has been revoked'

const ALLOW = HTTP_METHODS.join(', ')

/** 405 for a method outside the seven (spec 01: no error code, no receipt). */
export function sendMethodNotAllowed(res: ServerResponse): void {
  res.statusCode = 405
  res.setHeader('allow', ALLOW)
  res.setHeader('content-length', 0)
  res.end()
}

/** The 403 (or verdict status) denial body. */
export function sendDenial(res: ServerResponse, verdict: Extract<Verdict, { verdict: 'deny' }>, receiptId: string): void {
  const details = verdict.details as { reason_code?: string | null; hint?: string | null } | undefined
  const suggestion = details?.reason_code === 'capability_revoked' ? REVOKED_SUGGESTION : (details?.hint ?? CAPABILITY_SUGGESTION)
  sendError(res, new AccessDeniedError(verdict.reason, verdict.http_status ?? 403), { extra: { receipt_id: receiptId, suggestion } })
}

/**
 * The 409 approval body. `kernel_receipt_id` is the decision receipt (the one the pending approval is
 * bound to); `receipt_id` and X-Gate-Receipt-Id name the finalized receipt of this answer.
 */
export function sendApprovalRequired(
  res: ServerResponse,
  reason: string,
  ids: { decisionReceiptId: string; finalReceiptId: string },
  approval: { approval_id: string; resume_path: string } | undefined,
): void {
  const err = new PendingApprovalError(reason, { approvalId: approval?.approval_id, kernelReceiptId: ids.decisionReceiptId })
  const extra: Record<string, unknown> = {
    kernel_receipt_id: ids.decisionReceiptId,
    receipt_id: ids.finalReceiptId,
    suggestion: approval === undefined ? null : `an approver responds at ${approval.resume_path}; then retry with X-Gate-Approval-Id: ${approval.approval_id}`,
  }
  if (approval !== undefined) {
    extra.approval_id = approval.approval_id
    extra.resume_path = approval.resume_path
  }
  sendError(res, err, { extra })
}

/** 428 (incomplete) and 500 (cancel): the evaluate response is the body. */
export function sendEvaluateResponse(res: ServerResponse, status: number, responseJson: string, receiptId: string): void {
  sendJsonText(res, status, responseJson, { [RECEIPT_ID_HEADER]: receiptId })
}

/**
 * 502: spec 01 gives it no error code, so the body is a plain-text line (no gate_* body is invented);
 * the receipt id is in the header and the line.
 */
export function sendUpstreamFailure(res: ServerResponse, err: ProtectError, receiptId: string): void {
  if (res.headersSent) {
    res.destroy(err)
    return
  }
  const text = `${err.detail} (receipt ${receiptId})\n`
  res.statusCode = 502
  res.setHeader('content-type', 'text/plain; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(text))
  res.setHeader(RECEIPT_ID_HEADER, receiptId)
  res.end(text)
}

/**
 * 500 when evaluation (or a receipt write) failed: no verdict, so nothing is forwarded (fail closed).
 * `message` carries the error text (spec 01); the code names a receipt failure when that is the cause.
 */
export function sendEvaluationFailure(res: ServerResponse, err: unknown, receiptId?: string): void {
  const code = isGateError(err) ? err.code : undefined
  const text = err instanceof Error ? err.message : String(err)
  const kind = code === 'gate_receipt_persistence_failed' ? 'ReceiptStore' : code === 'gate_receipt_sign_failed' ? 'ReceiptSign' : 'Evaluation'
  const extra: Record<string, unknown> = { message: text }
  if (receiptId !== undefined) extra.receipt_id = receiptId
  sendError(res, new ProtectError(kind, text, err), { extra })
}
