// GET /v1/receipts/analytics (spec 03): admin service token only; a tenant token gets 403.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson } from '@gate/sdk'
import { sendJsonText, sendTrustError } from '@gate/sdk/server'
import { computeAnalytics, parseAnalyticsRequest } from '../analytics.js'
import { requireAdmin } from '../authorize.js'
import type { AnalyticsRollup } from '../analytics-rollup.js'
import type { LineagePort, ReceiptCorpusPort, TrustAuthenticator } from '../ports.js'
import type { ReceiptQueryEngine } from '../receipt-query.js'

export function createAnalyticsRoute(deps: { auth: TrustAuthenticator; engine: ReceiptQueryEngine; corpus: ReceiptCorpusPort; lineage: LineagePort; rollup?: AnalyticsRollup }) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'receipt analytics')
      const request = parseAnalyticsRequest(url)
      const filter = await deps.engine.resolveAgent(request.filter, request.agentSubject)
      const throughSeq = await deps.corpus.latestSeq()
      const body = await computeAnalytics(deps, request, { ...filter, throughSeq })
      sendJsonText(res, 200, canonicalJson(body))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}
