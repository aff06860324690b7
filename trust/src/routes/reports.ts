// GET /v1/reports/operator (spec 03): admin service token only; a tenant token gets 403.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { canonicalJson } from '@gate/sdk'
import { sendJsonText, sendTrustError } from '@gate/sdk/server'
import { requireAdmin } from '../authorize.js'
import { buildOperatorReport, parseOperatorReportRequest } from '../operator-report.js'
import type { AnalyticsRollup } from '../analytics-rollup.js'
import type { BudgetReportPort, LineagePort, ReceiptCorpusPort, TransparencyPort, TrustAuthenticator } from '../ports.js'
import type { ReceiptQueryEngine } from '../receipt-query.js'

export function createOperatorReportRoute(deps: {
  auth: TrustAuthenticator
  engine: ReceiptQueryEngine
  corpus: ReceiptCorpusPort
  lineage: LineagePort
  budgets: BudgetReportPort
  transparency?: TransparencyPort
  rollup?: AnalyticsRollup
  now: () => number
}) {
  return async (req: IncomingMessage, res: ServerResponse, _params: Record<string, string>, url: URL): Promise<void> => {
    try {
      requireAdmin(deps.auth, req, 'operator report')
      const request = parseOperatorReportRequest(url)
      const filter = await deps.engine.resolveAgent(request.analytics.filter, request.analytics.agentSubject)
      sendJsonText(res, 200, canonicalJson(await buildOperatorReport(deps, request, filter)))
    } catch (err) {
      sendTrustError(res, err)
    }
  }
}
