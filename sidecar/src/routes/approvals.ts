// Approval routes (spec 01/02 leave them "not shown"; Gate's design is in docs/approvals.md), behind
// the control token:
//   GET  /approvals                     pending approvals
//   GET  /approvals/:id                 one approval, any state
//   POST /approvals/:id/respond         {"decision": "approve" | "deny", "reason"?, "responder"?}
// Every transition signs and stores a receipt before answering.
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  BadRequestError,
  callerIdentityHash,
  contentHash,
  ControlAuthError,
  NotFoundError,
  sha256Hex,
  type Verdict,
} from '@gate/sdk'
import { parseJsonBody, readBody, sendError, sendJson } from '@gate/sdk/server'
import { readQueryParameters } from '@gate/trust'
import type { RouteContext } from './context.js'

const RESPOND_BODY_LIMIT = 16 * 1024
const RESPOND_PATTERN = '/approvals/{approval_id}/respond'

// None of these routes takes a query parameter: `GET /approvals?state=approved` answers 400 naming
// `state` instead of silently listing the pending ones.
function authorize(ctx: RouteContext, req: IncomingMessage, url: URL): void {
  const r = ctx.controlAuth.check(req)
  if (!r.ok) throw new ControlAuthError(r.status, r.message)
  readQueryParameters(url, [])
}

export function createListApprovalsRoute(ctx: RouteContext) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      authorize(ctx, req, url)
      sendJson(res, 200, { approvals: await ctx.approvals.listPending(ctx.kernel.now()) })
    } catch (err) {
      sendError(res, err)
    }
  }
}

export function createGetApprovalRoute(ctx: RouteContext) {
  return async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL): Promise<void> => {
    try {
      authorize(ctx, req, url)
      const approval = await ctx.approvals.get(params.id as string)
      if (approval === undefined) throw new NotFoundError(`approval ${params.id}`)
      sendJson(res, 200, approval)
    } catch (err) {
      sendError(res, err)
    }
  }
}

export function createRespondRoute(ctx: RouteContext) {
  return async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL): Promise<void> => {
    try {
      authorize(ctx, req, url)
      const id = params.id as string
      const raw = await readBody(req, RESPOND_BODY_LIMIT)
      const body = parseRespondBody(raw)
      const now = ctx.kernel.now()
      const existing = await ctx.approvals.get(id)
      if (existing === undefined) throw new NotFoundError(`approval ${id}`)
      const approval = await ctx.approvals.respond(id, body.decision, { responder: body.responder, reason: body.reason, now })
      const path = `/approvals/${id}/respond`
      const verdict: Verdict =
        body.decision === 'approve'
          ? { verdict: 'allow' }
          : { verdict: 'deny', reason: body.reason ?? 'denied by the approver', guard: 'ApprovalGuard', http_status: 403 }
      const signed = await ctx.kernel.recordEvent({
        request_id: approval.requestId,
        route_pattern: RESPOND_PATTERN,
        method: 'POST',
        caller_identity_hash: callerIdentityHash({ subject: `approver:${body.responder ?? 'operator'}`, auth_method: { method: 'anonymous' } }),
        verdict,
        receipt_kind: 'mediated_decision',
        boundary_class: 'prevent',
        tool_origin: 'caller_executed',
        redaction_mode: 'none',
        evidence: [{ guard_name: 'ApprovalGuard', verdict: body.decision === 'approve', details: `approval ${id} ${approval.state}` }],
        response_status: 200,
        timestamp: now,
        content_hash: contentHash({ method: 'POST', path, route_pattern: RESPOND_PATTERN, query: {}, body_hash: sha256Hex(raw) }),
        policy_hash: ctx.kernel.policyHash,
        trust_level: 'mediated',
        capability_id: null,
        metadata: {
          gate_approval_id: id,
          gate_approval_transition: approval.state,
          gate_decision_receipt_id: approval.decisionReceiptId,
        },
      })
      sendJson(res, 200, { approval, receipt_id: signed.receipt.id }, { 'x-gate-receipt-id': signed.receipt.id })
    } catch (err) {
      sendError(res, err)
    }
  }
}

function parseRespondBody(raw: Buffer): { decision: 'approve' | 'deny'; reason?: string; responder?: string } {
  const parsed = parseJsonBody(raw)
  if (!parsed.ok) throw new BadRequestError(parsed.problem)
  const value = parsed.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequestError('body must be a JSON object')
  const v = value as Record<string, unknown>
  if (v.decision !== 'approve' && v.decision !== 'deny') throw new BadRequestError('decision must be "approve" or "deny"')
  for (const f of ['reason', 'responder'] as const) {
    if (v[f] !== undefined && (typeof v[f] !== 'string' || (v[f] as string).length > 512)) throw new BadRequestError(`${f} must be a string of at most 512 characters`)
  }
  return { decision: v.decision, reason: v.reason as string | undefined, responder: v.responder as string | undefined }
}
