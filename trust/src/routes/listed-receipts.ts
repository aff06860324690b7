// GET/POST /v1/receipts/tools and GET/POST /v1/receipts/children (spec 03): ReceiptListResponse
// listings (`configured`, `backend`, `kind`, `count`, `filters`, `receipts`; no cursor; `receiptId`
// point-loads one row) and appends. Appends need the service token and are size-limited; the child
// listing is admin-only; a tenant token lists only tool receipts whose `tenant_id` is its tenant.
// Appended receipts are stored and served exactly as received (never re-canonicalized).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson, parseJsonExact, sha256Hex, verifyCoreReceipt } from '@gate/sdk'
import { readBody, sendJsonText, sendTrustError } from '@gate/sdk/server'
import { forbidden, requireAdmin, requirePrincipal } from '../authorize.js'
import { ReceiptRejectedError, TrustRequestError } from '../errors.js'
import type { AuthorityPort, ListedReceiptFilter, ListedReceiptKind, ListedReceiptPort, ReceiptCorpusPort, TrustAuthenticator } from '../ports.js'
import { checkIncomingLineage } from '../receipt-lineage.js'
import { lowerBound, readClamped, readQueryParameters, readText, readU64, upperBound } from '../query-params.js'

/** Body-size limit of the receipt append routes: 1 MiB, like /gate/verify's receipt body (spec 02). */
export const RECEIPT_APPEND_BODY_LIMIT = 1024 * 1024

const LIST_LIMIT = Object.freeze({ min: 1, max: 200, default: 50 })
const TOOL_PARAMETERS = ['receiptId', 'capabilityId', 'toolServer', 'toolName', 'since', 'until', 'limit']
const CHILD_PARAMETERS = ['receiptId', 'sessionId', 'parentRequestId', 'requestId', 'limit']
const CHILD_FIELDS = ['session_id', 'parent_request_id', 'request_id', 'operation_kind', 'terminal_state', 'outcome_hash', 'policy_hash'] as const

interface ListedDeps {
  auth: TrustAuthenticator
  listed: ListedReceiptPort
  authority: AuthorityPort
  /** Where an appended receipt's lineage parents are found (core receipts; child receipts in `listed`). */
  corpus: Pick<ReceiptCorpusPort, 'getById' | 'listChain'>
}

export function createListReceiptsRoute(deps: ListedDeps, kind: ListedReceiptKind) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      const principal = requirePrincipal(deps.auth, req)
      if (kind === 'child' && principal.kind !== 'admin') throw forbidden('child receipt listing')
      const values = readQueryParameters(url, kind === 'tool' ? TOOL_PARAMETERS : CHILD_PARAMETERS)
      const filter: ListedReceiptFilter = {}
      const echo: Record<string, unknown> = {}
      const text = (param: string, key: keyof ListedReceiptFilter) => {
        const value = readText(values, param)
        echo[param] = value ?? null
        if (value !== undefined) (filter as Record<string, unknown>)[key] = value
      }
      text('receiptId', 'receiptId')
      let impossible = false
      if (kind === 'tool') {
        text('capabilityId', 'capabilityId')
        text('toolServer', 'toolServer')
        text('toolName', 'toolName')
        const sinceRaw = readU64(values, 'since')
        const since = lowerBound(sinceRaw)
        impossible = since.impossible
        if (since.value !== undefined) filter.since = since.value
        const until = upperBound(readU64(values, 'until'))
        if (until !== undefined) filter.until = until
        echo.since = filter.since ?? null
        echo.until = filter.until ?? null
      } else {
        text('sessionId', 'sessionId')
        text('parentRequestId', 'parentRequestId')
        text('requestId', 'requestId')
      }
      const limit = readClamped(values, 'limit', LIST_LIMIT.min, LIST_LIMIT.max, LIST_LIMIT.default)
      echo.limit = limit
      if (principal.kind === 'tenant') filter.tenant = principal.tenant
      const rows = impossible ? [] : await deps.listed.list(kind, filter, limit)
      sendJsonText(
        res,
        200,
        `{"configured":true,"backend":${JSON.stringify(deps.listed.backend)},"kind":${JSON.stringify(kind)},"count":${rows.length},` +
          `"filters":${JSON.stringify(echo)},"receipts":[${rows.map(r => r.json).join(',')}]}`,
      )
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createAppendReceiptRoute(deps: ListedDeps, kind: ListedReceiptKind) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, kind === 'tool' ? 'tool receipt append' : 'child receipt append')
      readQueryParameters(url, [])
      const text = (await readBody(req, RECEIPT_APPEND_BODY_LIMIT)).toString('utf8').trim()
      let value: unknown
      try {
        value = parseJsonExact(text)
      } catch (err) {
        throw new TrustRequestError(`body is not valid JSON: ${(err as Error).message}`)
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TrustRequestError('body must be a JSON object')
      const receipt = value as Record<string, unknown>
      const input = kind === 'tool' ? toolReceiptInput(receipt, text, deps.authority) : childReceiptInput(receipt, text)
      // spec 03 Receipt DAG, fail closed: a parent set that does not match, parents on another chain or
      // not stored here, or an ordinal not above the parents' refuses the receipt before it is stored
      const problem = await checkIncomingLineage(deps, receipt)
      if (problem !== undefined) throw new ReceiptRejectedError(kind, `lineage ${problem.rule}: ${problem.detail}`)
      const { seq, stored } = await deps.listed.append(input)
      sendJsonText(res, 200, JSON.stringify({ receiptId: input.receiptId, seq, stored }))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

// A tool receipt is a core receipt (gate.receipt.v1): kind-coherent, its content-addressed id and
// signature verifying against its own kernel_key (spec 02 order). Fail closed: anything else is refused, nothing is repaired.
function toolReceiptInput(receipt: Record<string, unknown>, json: string, authority: AuthorityPort) {
  const check = verifyCoreReceipt(receipt, { trustedKeys: authority.status().trustedPublicKeys })
  if (!check.signature_valid) throw new ReceiptRejectedError('tool', `${check.failedStep ?? 'shape'}: ${check.detail}`)
  for (const field of ['tool_server', 'tool_name', 'capability_id'] as const) {
    if (typeof receipt[field] !== 'string') throw new ReceiptRejectedError('tool', `${field} must be a string`)
  }
  if (!Number.isSafeInteger(receipt.timestamp) || (receipt.timestamp as number) < 0) throw new ReceiptRejectedError('tool', 'timestamp must be Unix seconds')
  const tenant = receipt.tenant_id
  if (tenant !== undefined && tenant !== null && typeof tenant !== 'string') throw new ReceiptRejectedError('tool', 'tenant_id must be a string or null')
  return {
    kind: 'tool' as const,
    receiptId: receipt.id as string,
    json,
    timestamp: receipt.timestamp as number,
    tenant: (tenant as string | null | undefined) ?? null,
    capabilityId: receipt.capability_id as string,
    toolServer: receipt.tool_server as string,
    toolName: receipt.tool_name as string,
  }
}

// A child receipt (spec 03, nested flows). Its id is content-addressed like every Gate receipt id:
// SHA-256 of the canonical JSON of every member but `id`; a supplied id must equal it.
function childReceiptInput(receipt: Record<string, unknown>, json: string) {
  for (const field of CHILD_FIELDS) {
    if (typeof receipt[field] !== 'string' || receipt[field] === '') throw new ReceiptRejectedError('child', `${field} must be a non-empty string`)
  }
  const metadata = receipt.metadata
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw new ReceiptRejectedError('child', 'metadata must be an object when present')
  }
  const { id, ...body } = receipt
  let canonical: string
  try {
    canonical = canonicalJson(body)
  } catch (err) {
    // a lone surrogate or nesting past 256 levels: the sender's receipt has no canonical form (RFC 8785)
    throw new ReceiptRejectedError('child', `it has no canonical JSON form: ${(err as Error).message}`)
  }
  const expected = sha256Hex(canonical)
  if (id !== undefined && id !== expected) throw new ReceiptRejectedError('child', 'id is not the SHA-256 of the canonical receipt without id')
  return {
    kind: 'child' as const,
    receiptId: expected,
    json,
    sessionId: receipt.session_id as string,
    parentRequestId: receipt.parent_request_id as string,
    requestId: receipt.request_id as string,
  }
}
