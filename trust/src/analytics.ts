// Receipt analytics (spec 03, /v1/receipts/analytics): summary, byAgent, byTool and byTime metrics.
// Counts and cost sums always appear; the three rates are omitted when their denominator is zero
// (never reported as 0 or NaN). `summary` is the sum of the time buckets (each receipt lies in exactly
// one), so the corpus is aggregated three times, not four.
import { AnalyticsRollup } from './analytics-rollup.js'
import type { CorpusAggregateRow, CorpusFilter, LineagePort, ReceiptCorpusPort } from './ports.js'
import { lowerBound, readClamped, readQueryParameters, readSubjectKey, readText, readTimeBucket, readU64, upperBound, exactNumber } from './query-params.js'

/** Query parameters of the analytics route. */
export const ANALYTICS_PARAMETERS: readonly string[] = Object.freeze(['capabilityId', 'agentSubject', 'toolServer', 'toolName', 'since', 'until', 'groupLimit', 'timeBucket'])

/** groupLimit: clamped to 1..200, default 50. */
export const GROUP_LIMIT = Object.freeze({ min: 1, max: 200, default: 50 })

/** The spec 03 metrics object. */
export interface Metrics {
  totalReceipts: number
  allowCount: number
  denyCount: number
  cancelledCount: number
  incompleteCount: number
  totalCostCharged: number
  totalAttemptedCost: number
  /** allows / (allows + cancelled + incomplete); omitted when that is 0. */
  reliabilityScore?: number
  /** non-denies / total; omitted when total is 0. */
  complianceRate?: number
  /** charged / (charged + attempted); omitted when that is 0. */
  budgetUtilizationRate?: number
}

export interface AnalyticsBody {
  summary: Metrics
  byAgent: { subjectKey: string; metrics: Metrics }[]
  byTool: { toolServer: string; toolName: string; metrics: Metrics }[]
  byTime: { bucketStart: number; bucketEnd: number; metrics: Metrics }[]
}

/** A parsed analytics request; `resolved` is how the filters are echoed by the operator report. */
export interface AnalyticsRequest {
  filter: CorpusFilter
  agentSubject?: string
  groupLimit: number
  timeBucket: { name: 'hour' | 'day'; seconds: number }
  impossible: boolean
  resolved: Record<string, unknown>
}

/** Parses the analytics filters out of already-read parameters (the operator report adds its own). */
export function parseAnalyticsValues(values: Map<string, string>): AnalyticsRequest {
  const sinceRaw = readU64(values, 'since')
  const untilRaw = readU64(values, 'until')
  const since = lowerBound(sinceRaw)
  const filter: CorpusFilter = {}
  const capabilityId = readText(values, 'capabilityId')
  const toolServer = readText(values, 'toolServer')
  const toolName = readText(values, 'toolName')
  if (capabilityId !== undefined) filter.capabilityId = capabilityId
  if (toolServer !== undefined) filter.toolServer = toolServer
  if (toolName !== undefined) filter.toolName = toolName
  if (since.value !== undefined) filter.since = since.value
  const until = upperBound(untilRaw)
  if (until !== undefined) filter.until = until
  const agentSubject = readSubjectKey(values, 'agentSubject')
  const groupLimit = readClamped(values, 'groupLimit', GROUP_LIMIT.min, GROUP_LIMIT.max, GROUP_LIMIT.default)
  const timeBucket = readTimeBucket(values, 'timeBucket')
  return {
    filter,
    agentSubject,
    groupLimit,
    timeBucket,
    impossible: since.impossible,
    resolved: {
      capabilityId: capabilityId ?? null,
      agentSubject: agentSubject ?? null,
      toolServer: toolServer ?? null,
      toolName: toolName ?? null,
      since: exactNumber(sinceRaw),
      until: exactNumber(untilRaw),
      groupLimit,
      timeBucket: timeBucket.name,
    },
  }
}

/** Parses the query string of the analytics route. */
export function parseAnalyticsRequest(url: URL): AnalyticsRequest {
  return parseAnalyticsValues(readQueryParameters(url, ANALYTICS_PARAMETERS))
}

/** The metrics of one aggregate row. */
export function metricsOf(row: Pick<CorpusAggregateRow, 'total' | 'allow' | 'deny' | 'cancelled' | 'incomplete' | 'charged' | 'attempted'>): Metrics {
  const metrics: Metrics = {
    totalReceipts: row.total,
    allowCount: row.allow,
    denyCount: row.deny,
    cancelledCount: row.cancelled,
    incompleteCount: row.incomplete,
    totalCostCharged: row.charged,
    totalAttemptedCost: row.attempted,
  }
  const reliabilityBase = row.allow + row.cancelled + row.incomplete
  if (reliabilityBase > 0) metrics.reliabilityScore = row.allow / reliabilityBase
  if (row.total > 0) metrics.complianceRate = (row.total - row.deny) / row.total
  const budgetBase = row.charged + row.attempted
  if (budgetBase > 0) metrics.budgetUtilizationRate = row.charged / budgetBase
  return metrics
}

type Totals = Pick<CorpusAggregateRow, 'total' | 'allow' | 'deny' | 'cancelled' | 'incomplete' | 'charged' | 'attempted'>

const ZERO: Totals = Object.freeze({ total: 0, allow: 0, deny: 0, cancelled: 0, incomplete: 0, charged: 0, attempted: 0 })

/** Adds `b` into a copy of `a`. */
export function addTotals(a: Totals, b: Totals): Totals {
  return {
    total: a.total + b.total,
    allow: a.allow + b.allow,
    deny: a.deny + b.deny,
    cancelled: a.cancelled + b.cancelled,
    incomplete: a.incomplete + b.incomplete,
    charged: a.charged + b.charged,
    attempted: a.attempted + b.attempted,
  }
}

/**
 * Attributes subject-grouped rows to agents: a stored subject key, or (for rows without one) the
 * subject the capability was issued to. Rows with neither (anonymous, session-scoped allows) belong to
 * no agent and appear only in summary, byTool and byTime.
 */
export async function attributeToAgents(rows: readonly CorpusAggregateRow[], lineage: LineagePort): Promise<Map<string, Totals>> {
  const unresolved = rows.filter(r => r.subjectKey === null && r.capabilityId !== null && r.capabilityId !== undefined).map(r => r.capabilityId as string)
  const subjects = unresolved.length === 0 ? new Map<string, string>() : await lineage.subjectsOf(unresolved)
  const agents = new Map<string, Totals>()
  for (const row of rows) {
    const key = row.subjectKey ?? (row.capabilityId === null || row.capabilityId === undefined ? undefined : subjects.get(row.capabilityId))
    if (key === undefined) continue
    agents.set(key, addTotals(agents.get(key) ?? ZERO, row))
  }
  return agents
}

/** Computes the analytics body. */
export async function computeAnalytics(
  deps: { corpus: ReceiptCorpusPort; lineage: LineagePort; rollup?: AnalyticsRollup },
  request: AnalyticsRequest,
  filter: CorpusFilter,
): Promise<AnalyticsBody> {
  return (await computeAnalyticsWithRows(deps, request, filter)).body
}

/** The analytics body and the per-agent rows it was computed from (the operator report reuses them). */
export async function computeAnalyticsWithRows(
  deps: { corpus: ReceiptCorpusPort; lineage: LineagePort; rollup?: AnalyticsRollup },
  request: AnalyticsRequest,
  filter: CorpusFilter,
): Promise<{ body: AnalyticsBody; subjectRows: CorpusAggregateRow[] }> {
  if (request.impossible) return { body: { summary: metricsOf(ZERO), byAgent: [], byTool: [], byTime: [] }, subjectRows: [] }
  // Whole corpus or a time window: from the rollup (whole hours and days) plus SQL for partial days.
  const rolled =
    deps.rollup !== undefined && AnalyticsRollup.covers(filter)
      ? await deps.rollup.rows(filter.since, filter.until, filter.throughSeq ?? (await deps.corpus.latestSeq()), request.timeBucket.seconds)
      : undefined
  const [timeRows, toolRows, subjectRows] =
    rolled !== undefined
      ? [rolled.timeRows, rolled.toolRows, rolled.subjectRows]
      : await Promise.all([
          deps.corpus.aggregate(filter, 'time', request.timeBucket.seconds),
          deps.corpus.aggregate(filter, 'tool'),
          deps.corpus.aggregate(filter, 'subject'),
        ])
  const summary = timeRows.reduce<Totals>((sum, row) => addTotals(sum, row), ZERO)
  const agents = await attributeToAgents(subjectRows, deps.lineage)
  const byAgent = [...agents]
    .sort(([ka, a], [kb, b]) => b.total - a.total || (ka < kb ? -1 : 1))
    .slice(0, request.groupLimit)
    .map(([subjectKey, totals]) => ({ subjectKey, metrics: metricsOf(totals) }))
  const byTool = [...toolRows]
    .sort((a, b) => b.total - a.total || compareText(`${a.toolServer} ${a.toolName}`, `${b.toolServer} ${b.toolName}`))
    .slice(0, request.groupLimit)
    .map(row => ({ toolServer: row.toolServer as string, toolName: row.toolName as string, metrics: metricsOf(row) }))
  // The most recent `groupLimit` buckets, oldest first; bucketEnd is inclusive like `until`.
  const byTime = [...timeRows]
    .sort((a, b) => (a.bucketStart as number) - (b.bucketStart as number))
    .slice(-request.groupLimit)
    .map(row => ({ bucketStart: row.bucketStart as number, bucketEnd: (row.bucketStart as number) + request.timeBucket.seconds - 1, metrics: metricsOf(row) }))
  return { body: { summary: metricsOf(summary), byAgent, byTool, byTime }, subjectRows }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
