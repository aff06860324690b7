// The operator report (spec 03, /v1/reports/operator). Every top-level key is always present. Each
// section holds what the stored data supports: receipt activity and cost attribution from the receipt
// store, budget utilization from the budget store, lineage coverage from the capability store,
// checkpoint coverage from the transparency log (a checkpoint of tree size S covers the receipts with
// seq <= S). Gate keeps no settlement or metered-billing reconciliation state and no federation peers,
// so those sections report counts of zero over empty row lists (true statements about this
// deployment), never estimated numbers.
import type { BudgetReportPort, CorpusAggregateRow, CorpusFilter, CorpusRow, LineagePort, ReceiptCorpusPort, TransparencyPort } from './ports.js'
import { ANALYTICS_PARAMETERS, computeAnalyticsWithRows, parseAnalyticsValues, type AnalyticsBody, type AnalyticsRequest } from './analytics.js'
import type { AnalyticsRollup } from './analytics-rollup.js'
import { readClamped, readQueryParameters } from './query-params.js'

/** Row limits of the report: [parameter, default]; each is clamped to 1..500. */
export const REPORT_ROW_LIMITS = Object.freeze({
  attributionLimit: 100,
  budgetLimit: 50,
  settlementLimit: 50,
  meteredLimit: 50,
  authorizationLimit: 50,
  economicLimit: 50,
} as const)

const ROW_LIMIT_MAX = 500

/** Query parameters of the operator report. */
export const OPERATOR_REPORT_PARAMETERS: readonly string[] = Object.freeze([...ANALYTICS_PARAMETERS, ...Object.keys(REPORT_ROW_LIMITS)])

/** Profile and schema ids of the authorization-context section (Gate's HTTP capability profile). */
export const AUTHORIZATION_CONTEXT_SCHEMA = 'gate.authorization-context-report.v1'
export const AUTHORIZATION_CONTEXT_PROFILE = 'gate.http-capability.v1'

export interface OperatorReportRequest {
  analytics: AnalyticsRequest
  limits: Record<keyof typeof REPORT_ROW_LIMITS, number>
}

export function parseOperatorReportRequest(url: URL): OperatorReportRequest {
  const values = readQueryParameters(url, OPERATOR_REPORT_PARAMETERS)
  const analytics = parseAnalyticsValues(values)
  const limits = {} as Record<keyof typeof REPORT_ROW_LIMITS, number>
  for (const [name, fallback] of Object.entries(REPORT_ROW_LIMITS) as [keyof typeof REPORT_ROW_LIMITS, number][]) {
    limits[name] = readClamped(values, name, 1, ROW_LIMIT_MAX, fallback)
  }
  return { analytics, limits }
}

export interface OperatorReportDeps {
  rollup?: AnalyticsRollup
  corpus: ReceiptCorpusPort
  lineage: LineagePort
  budgets: BudgetReportPort
  /** Absent: no transparency log, so nothing is checkpointed. */
  transparency?: TransparencyPort
  now: () => number
}

/** Builds the report; `filter` is the analytics filter with the agent already resolved. */
export async function buildOperatorReport(deps: OperatorReportDeps, request: OperatorReportRequest, filter: CorpusFilter): Promise<Record<string, unknown>> {
  const { analytics, limits } = request
  const snapshot = await deps.corpus.latestSeq()
  const bounded: CorpusFilter = { ...filter, throughSeq: snapshot }
  const empty = analytics.impossible
  const { body: activity, subjectRows } = await computeAnalyticsWithRows(deps, analytics, bounded)
  const costRows = empty ? [] : await deps.corpus.aggregate(bounded, 'cost')
  const capabilityReceipts = empty ? 0 : await deps.corpus.countMatching({ ...bounded, withCapability: true })
  const meteredCount = empty ? 0 : await deps.corpus.countMatching({ ...bounded, withCost: true })
  const meteredRows = empty || meteredCount === 0 ? [] : await newestRows(deps.corpus, { ...bounded, withCost: true }, limits.meteredLimit)
  const authorizationRows = empty || capabilityReceipts === 0 ? [] : await newestRows(deps.corpus, { ...bounded, withCapability: true }, limits.authorizationLimit)
  const checkpoints = await checkpointCounts(deps, bounded, empty)
  const lineageSubjects = await deps.lineage.subjectsOf(unique([...costRows, ...subjectRows].filter(r => r.subjectKey === null).map(r => r.capabilityId).filter(isString)))

  return {
    generatedAt: deps.now(),
    filters: { ...analytics.resolved, ...limits },
    activity,
    costAttribution: costAttribution(costRows, lineageSubjects, limits.attributionLimit),
    budgetUtilization: await budgetUtilization(deps, filter, limits.budgetLimit),
    compliance: compliance(activity, subjectRows, lineageSubjects, capabilityReceipts, analytics, checkpoints),
    settlementReconciliation: {
      summary: { receiptCount: 0, pendingCount: 0, reconciledCount: 0, failedCount: 0, source: 'no settlement reconciliation state is recorded by this deployment' },
      receipts: [],
    },
    meteredBillingReconciliation: meteredBilling(meteredRows, meteredCount),
    authorizationContext: {
      schema: AUTHORIZATION_CONTEXT_SCHEMA,
      profile: AUTHORIZATION_CONTEXT_PROFILE,
      summary: authorizationSummary(activity, capabilityReceipts, authorizationRows.length),
      receipts: authorizationRows.map(row => ({
        receiptId: row.receiptId,
        seq: row.seq,
        timestamp: row.timestamp,
        capabilityId: row.capabilityId,
        subjectKey: row.subjectKey ?? (row.capabilityId === null ? null : (lineageSubjects.get(row.capabilityId) ?? null)),
        toolServer: row.toolServer,
        toolName: row.toolName,
        outcome: row.outcome,
      })),
    },
    sharedEvidence: {
      summary: { referenceCount: 0, sharedReceiptCount: 0, federationEnabled: false },
      references: [],
    },
  }
}

// The newest `limit` matching receipts, oldest first.
async function newestRows(corpus: ReceiptCorpusPort, filter: CorpusFilter, limit: number): Promise<CorpusRow[]> {
  return (await corpus.queryPage(filter, limit, 'desc')).reverse()
}

function costAttribution(rows: readonly CorpusAggregateRow[], lineage: Map<string, string>, limit: number) {
  const currencies = new Map<string, { currency: string; costCharged: number; attemptedCost: number; receiptCount: number }>()
  let charged = 0
  let attempted = 0
  let receipts = 0
  for (const row of rows) {
    charged += row.charged
    attempted += row.attempted
    receipts += row.total
    const currency = row.costCurrency ?? 'unknown'
    const entry = currencies.get(currency) ?? { currency, costCharged: 0, attemptedCost: 0, receiptCount: 0 }
    entry.costCharged += row.charged
    entry.attemptedCost += row.attempted
    entry.receiptCount += row.total
    currencies.set(currency, entry)
  }
  const sorted = [...rows].sort((a, b) => b.charged - a.charged || b.attempted - a.attempted || b.total - a.total)
  return {
    summary: {
      totalCostCharged: charged,
      totalAttemptedCost: attempted,
      receiptsWithCost: receipts,
      attributedRowCount: rows.length,
      truncated: rows.length > limit,
      currencies: [...currencies.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1)),
    },
    rows: sorted.slice(0, limit).map(row => ({
      capabilityId: row.capabilityId ?? null,
      subjectKey: row.subjectKey ?? (row.capabilityId === null || row.capabilityId === undefined ? null : (lineage.get(row.capabilityId) ?? null)),
      currency: row.costCurrency ?? null,
      costCharged: row.charged,
      attemptedCost: row.attempted,
      receiptCount: row.total,
    })),
  }
}

async function budgetUtilization(deps: OperatorReportDeps, filter: CorpusFilter, limit: number) {
  // The budget store counts per (capability, grant); receipt-level filters other than the capability
  // and the agent do not apply to it.
  let grants
  if (filter.capabilityId !== undefined) {
    grants = (await deps.budgets.usage(filter.capabilityId)).grants
  } else if (filter.subject !== undefined) {
    grants = []
    for (const id of filter.subject.capabilityIds) {
      grants.push(...(await deps.budgets.usage(id)).grants)
      if (grants.length >= limit) break
    }
  } else {
    grants = await deps.budgets.listGrants(limit + 1)
  }
  const truncated = grants.length > limit
  grants = grants.slice(0, limit)
  const subjects = await deps.lineage.subjectsOf(unique(grants.map(g => g.capabilityId)))
  const rows = []
  for (const grant of grants) {
    const usage = await deps.budgets.usage(grant.capabilityId)
    const costs = usage.costs.filter(c => c.grantKey === grant.grantKey).map(c => ({ currency: c.currency, units: c.units, attemptedUnits: c.attemptedUnits }))
    const row: Record<string, unknown> = {
      capabilityId: grant.capabilityId,
      grantKey: grant.grantKey,
      subjectKey: subjects.get(grant.capabilityId) ?? null,
      invocationsUsed: grant.used,
      maxInvocations: grant.maxInvocations,
      remainingInvocations: Math.max(0, grant.maxInvocations - grant.used),
      exhausted: grant.used >= grant.maxInvocations,
      costs,
      updatedAt: grant.updatedAt,
    }
    if (grant.maxInvocations > 0) row.utilizationRate = grant.used / grant.maxInvocations
    rows.push(row)
  }
  const used = grants.reduce((n, g) => n + g.used, 0)
  const max = grants.reduce((n, g) => n + g.maxInvocations, 0)
  const summary: Record<string, unknown> = {
    grantCount: grants.length,
    truncated,
    totalInvocationsUsed: used,
    totalMaxInvocations: max,
    exhaustedGrants: grants.filter(g => g.used >= g.maxInvocations).length,
  }
  if (max > 0) summary.utilizationRate = used / max
  return { summary, rows }
}

/** Receipts of the window a checkpoint covers, and the log's checkpoint count. */
async function checkpointCounts(deps: OperatorReportDeps, bounded: CorpusFilter, empty: boolean): Promise<{ covered: number; count: number; treeSize: number | null }> {
  if (deps.transparency === undefined) return { covered: 0, count: 0, treeSize: null }
  const status = await deps.transparency.status()
  const treeSize = status.lastCheckpoint?.treeSize ?? null
  if (empty || treeSize === null || treeSize === 0) return { covered: 0, count: status.checkpointCount, treeSize }
  const through = Math.min(bounded.throughSeq ?? treeSize, treeSize)
  return { covered: await deps.corpus.countMatching({ ...bounded, throughSeq: through }), count: status.checkpointCount, treeSize }
}

function compliance(
  activity: AnalyticsBody,
  subjectRows: readonly CorpusAggregateRow[],
  lineage: Map<string, string>,
  capabilityReceipts: number,
  analytics: AnalyticsRequest,
  checkpoints: { covered: number; count: number; treeSize: number | null },
) {
  const total = activity.summary.totalReceipts
  let stored = 0
  let resolved = 0
  for (const row of subjectRows) {
    if (row.subjectKey !== null && row.subjectKey !== undefined) stored += row.total
    else if (row.capabilityId !== null && row.capabilityId !== undefined && lineage.has(row.capabilityId)) resolved += row.total
  }
  const checkpoint: Record<string, unknown> = {
    checkpointedReceipts: checkpoints.covered,
    uncheckpointedReceipts: total - checkpoints.covered,
    checkpointCount: checkpoints.count,
    latestCheckpointTreeSize: checkpoints.treeSize,
  }
  if (total > 0) checkpoint.coverageRate = checkpoints.covered / total
  const lineageCoverage: Record<string, unknown> = {
    receiptsWithCapability: capabilityReceipts,
    receiptsWithStoredSubject: stored,
    receiptsResolvedThroughLineage: resolved,
    unattributedReceipts: total - stored - resolved,
  }
  if (total > 0) lineageCoverage.coverageRate = (stored + resolved) / total
  const query: Record<string, string> = {}
  for (const [name, value] of Object.entries(analytics.resolved)) {
    if (value !== null && ['capabilityId', 'agentSubject', 'toolServer', 'toolName', 'since', 'until'].includes(name)) query[name] = String(value)
  }
  return {
    totalReceipts: total,
    checkpointCoverage: checkpoint,
    lineageCoverage,
    settlementBacklog: { pendingCount: 0, failedCount: 0, staleCount: 0 },
    evidenceExportQuery: { method: 'GET', path: '/v1/receipts/query', query, totalReceipts: total },
    // Child receipts carry session and request ids but no capability, agent or tool the report filters
    // could join on, so the report does not include them.
    childReceiptScope: 'omitted_no_join_path',
  }
}

function meteredBilling(rows: readonly CorpusRow[], count: number) {
  const charged = rows.reduce((n, r) => n + (r.costUnits ?? 0), 0)
  return {
    summary: { meteredReceiptCount: count, reconciledCount: 0, unreconciledCount: count, listedReceipts: rows.length, listedCostCharged: charged },
    receipts: rows.map(row => ({
      receiptId: row.receiptId,
      seq: row.seq,
      timestamp: row.timestamp,
      capabilityId: row.capabilityId,
      toolServer: row.toolServer,
      toolName: row.toolName,
      costCharged: row.costUnits,
      attemptedCost: row.attemptedCostUnits,
      currency: row.costCurrency,
      reconciliationState: 'unreconciled',
    })),
  }
}

function authorizationSummary(activity: AnalyticsBody, capabilityReceipts: number, listed: number) {
  return {
    totalReceipts: activity.summary.totalReceipts,
    capabilityReceipts,
    sessionScopedReceipts: activity.summary.totalReceipts - capabilityReceipts,
    allowCount: activity.summary.allowCount,
    denyCount: activity.summary.denyCount,
    listedReceipts: listed,
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)]
}

function isString(value: unknown): value is string {
  return typeof value === 'string'
}

