// POST /gate/verify (spec 02): 200 with a VerifyReceiptResponse; `signer_trusted` only for this
// sidecar's own key (current or kept after rotation). A body that is not an HttpReceipt → 400.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { BadRequestError, verifyHttpReceipt } from '@gate/sdk'
import { parseJsonBody, readBody } from '@gate/sdk/server'
import { sendError, sendJson } from '@gate/sdk/server'
import type { RouteContext } from './context.js'

/** Spec 02, Limits: at most 1 MiB read. */
const VERIFY_BODY_LIMIT = 1024 * 1024

export function createVerifyRoute(ctx: RouteContext) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let receipt: unknown
    try {
      const body = await readBody(req, VERIFY_BODY_LIMIT)
      const parsed = parseJsonBody(body)
      if (!parsed.ok) throw new BadRequestError(parsed.problem)
      receipt = parsed.value
      if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) throw new BadRequestError('body is not an HttpReceipt: expected a JSON object')
      const problem = receiptShapeProblem(receipt as Record<string, unknown>)
      if (problem !== undefined) throw new BadRequestError(`body is not an HttpReceipt: ${problem}`)
    } catch (err) {
      return sendError(res, err)
    }
    sendJson(res, 200, verifyHttpReceipt(receipt, { trustedKeys: ctx.kernel.ownKeys() }))
  }
}

const VERDICT_TAGS: ReadonlySet<unknown> = new Set(['allow', 'deny', 'cancel', 'incomplete'])

const STRING_FIELDS = [
  'id', 'request_id', 'route_pattern', 'method', 'caller_identity_hash', 'receipt_kind', 'boundary_class',
  'tool_origin', 'redaction_mode', 'content_hash', 'policy_hash', 'trust_level', 'kernel_key', 'signature',
] as const

// Structural check only: field values that are wrong (tampered, bad semantics, malformed hashes) are
// the verifier's to report through the false flags of VerifyReceiptResponse, not a 400.
function receiptShapeProblem(r: Record<string, unknown>): string | undefined {
  for (const f of STRING_FIELDS) if (typeof r[f] !== 'string') return `${f} must be a string`
  for (const f of ['response_status', 'timestamp'] as const) if (!Number.isInteger(r[f])) return `${f} must be an integer`
  const v = r.verdict as { verdict?: unknown } | null
  if (typeof v !== 'object' || v === null || !VERDICT_TAGS.has(v.verdict as string)) return 'verdict must be an object tagged allow, deny, cancel or incomplete'
  return undefined
}
