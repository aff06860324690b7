// GET /v1/receipts/query, GET /v1/agents/{subject_key}/receipts (spec 03, receipt read routes; either
// principal, a tenant token reading only its tenant's receipts) and GET /v1/receipts/{receipt_id}, Gate's
// point load for `gate receipt explain --control-url` (same scoping: another tenant's receipt is not
// found, so the route is no existence oracle). A stored receipt that does not verify is served as stored
// with an `unverifiedReceipts` member naming the failing step (the query response's, additive).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { NotFoundError } from '@gate/sdk'
import { sendJsonText, sendTrustError } from '@gate/sdk/server'
import { requirePrincipal } from '../authorize.js'
import { InvalidQueryParameterError } from '../errors.js'
import type { ReceiptCorpusPort, TrustAuthenticator } from '../ports.js'
import { readQueryParameters } from '../query-params.js'
import { jsonOrNull, parseAgentQuery, parseReceiptQuery, unverifiedMember, type ReceiptQueryEngine } from '../receipt-query.js'

interface ReceiptRouteDeps {
  auth: TrustAuthenticator
  engine: ReceiptQueryEngine
  corpus: ReceiptCorpusPort
}

const RECEIPT_ID = /^[0-9a-f]{64}$/

export function createReceiptQueryRoute(deps: ReceiptRouteDeps) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      const principal = requirePrincipal(deps.auth, req)
      const result = await deps.engine.query(parseReceiptQuery(url), principal)
      sendJsonText(res, 200, result.json)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createAgentReceiptsRoute(deps: ReceiptRouteDeps) {
  return async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL): Promise<void> => {
    try {
      const principal = requirePrincipal(deps.auth, req)
      const result = await deps.engine.query(parseAgentQuery(url, params.subject_key ?? ''), principal)
      sendJsonText(res, 200, result.json)
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

export function createReceiptByIdRoute(deps: ReceiptRouteDeps) {
  return async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL): Promise<void> => {
    try {
      const principal = requirePrincipal(deps.auth, req)
      readQueryParameters(url, [])
      const id = params.receipt_id ?? ''
      if (!RECEIPT_ID.test(id)) throw new InvalidQueryParameterError('receipt_id', '64 lowercase hex characters', id)
      const row = await deps.corpus.getById(id)
      if (row === undefined || (principal.kind === 'tenant' && row.tenant !== principal.tenant)) throw new NotFoundError(`receipt ${id}`)
      const served = await deps.engine.serve([row])
      const finals = row.kind === 'decision' ? await deps.corpus.findFinals(row.seq, row.receiptId) : []
      const visibleFinals = finals.filter(f => principal.kind === 'admin' || f.tenant === principal.tenant).map(f => f.receiptId)
      sendJsonText(
        res,
        200,
        `{"seq":${row.seq},"kind":${JSON.stringify(row.kind)},"decisionReceiptId":${JSON.stringify(row.decisionReceiptId)},` +
          `"finalReceiptIds":${JSON.stringify(visibleFinals)},"receipt":${served.texts[0]},"httpReceipt":${jsonOrNull(row.httpJson)}` +
          `${unverifiedMember(served.unverified)}}`,
      )
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}

