// Analytics and the operator report from the per-hour rollups of migration 4 (kept by the receipt log in
// the append's statement), exact for any window: the whole hours of [since, until] come from the rollup
// tables, the partial hours at either end from the receipts (the time index, under an hour of rows
// each), and receipts committed after the request's snapshot bound (`throughSeq`) are subtracted again,
// all read in one REPEATABLE READ snapshot, in which the rollups hold exactly the receipts up to the
// highest seq it sees. Filters on a capability, tool, outcome, tenant or cost are not rolled up: they
// select few receipts and their indexes serve them (the caller scans). The agent filter's count is (the
// agent route's totalCount), from the agent rollup.
import type { CorpusAggregateRow, CorpusFilter, CorpusGrouping } from '../ports.js'
import type { PgDatabase, PgExecutor, PgValue } from './pg-database.js'
import { isEmptyWindow, scanAggregate, scanCount } from './pg-corpus-sql.js'

const HOUR = 3600
// a bound past every stored timestamp (and still exact as a double after adding one)
const LAST = Number.MAX_SAFE_INTEGER - 1
const TOTALS = ['total', 'allow', 'deny', 'cancelled', 'incomplete', 'charged', 'attempted'] as const
const SUMS = TOTALS.map(c => `sum(${c})::bigint AS ${c}`).join(', ')

type Totals = Pick<CorpusAggregateRow, (typeof TOTALS)[number]>

// Filter members the rollups can answer for (the window and the snapshot bound).
const WINDOW_KEYS = new Set(['since', 'until', 'throughSeq'])

/** True when the rollups answer `aggregate(filter, grouping, bucketSeconds, perBucket)`. */
export function rollupCovers(filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds: number, perBucket: boolean): boolean {
  if (perBucket || (grouping === 'time' && (!Number.isSafeInteger(bucketSeconds) || bucketSeconds < HOUR || bucketSeconds % HOUR !== 0))) return false
  if (!['none', 'time', 'tool', 'subject', 'cost'].includes(grouping)) return false
  return Object.entries(filter).every(([key, value]) => value === undefined || WINDOW_KEYS.has(key))
}

/** Where `countMatching(filter)` reads its whole hours: a rollup table and column. */
export interface RollupCountPlan {
  table: 'receipt_rollup_time' | 'receipt_rollup_subject'
  column: 'total' | 'with_capability' | 'with_cost'
}

/** The rollup `countMatching(filter)` can read, or undefined when it is not rolled up. */
export function rollupCountPlan(filter: CorpusFilter): RollupCountPlan | undefined {
  const { withCapability, withCost, subject, ...rest } = filter
  if (withCapability === true && withCost === true) return undefined
  if (!Object.entries(rest).every(([key, value]) => value === undefined || WINDOW_KEYS.has(key))) return undefined
  // the agent route's count: the agent rollup holds exactly the agent filter's two halves
  if (subject !== undefined) return withCapability === true || withCost === true ? undefined : { table: 'receipt_rollup_subject', column: 'total' }
  return { table: 'receipt_rollup_time', column: withCapability === true ? 'with_capability' : withCost === true ? 'with_cost' : 'total' }
}

/** `aggregate` of a filter `rollupCovers` accepted. */
export async function rollupAggregate(db: PgDatabase, filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds: number): Promise<CorpusAggregateRow[]> {
  if (isEmptyWindow(filter)) return []
  const key = groupKey(grouping)
  const merged = new Map<string, CorpusAggregateRow>()
  const add = (rows: readonly CorpusAggregateRow[], sign: 1 | -1) => {
    for (const row of rows) {
      const k = key(row)
      const existing = merged.get(k)
      if (existing === undefined) merged.set(k, sign === 1 ? { ...row } : { ...row, ...scaled(row, -1) })
      else Object.assign(existing, sum(existing, scaled(row, sign)))
    }
  }
  await db.transaction(
    tx =>
      combine(tx, filter, {
        rolled: async (from, to) => add(await rolledRows(tx, grouping, bucketSeconds, from, to), 1),
        scanned: async (f, sign) => add(await scanAggregate(tx, f, grouping, grouping === 'time' ? bucketSeconds : undefined), sign),
      }),
    { isolation: 'repeatable read' },
  )
  return [...merged.values()].filter(r => r.total > 0)
}

/** `countMatching` of a filter `rollupCountPlan` accepted. */
export async function rollupCount(db: PgDatabase, filter: CorpusFilter, plan: RollupCountPlan): Promise<number> {
  if (isEmptyWindow(filter)) return 0
  let count = 0
  await db.transaction(
    tx =>
      combine(tx, filter, {
        rolled: async (from, to) => {
          const params: PgValue[] = [from, to]
          let agent = ''
          if (filter.subject !== undefined) {
            params.push(filter.subject.subjectKey, [...filter.subject.capabilityIds])
            agent = 'AND (subject_key = $3 OR (subject_key IS NULL AND capability_id = ANY($4::text[])))'
          }
          count += (await tx.get<{ n: number | null }>(`SELECT sum(${plan.column})::bigint AS n FROM ${plan.table} WHERE hour >= $1 AND hour < $2 ${agent}`, params))?.n ?? 0
        },
        scanned: async (f, sign) => {
          count += sign * (await scanCount(tx, f))
        },
      }),
    { isolation: 'repeatable read' },
  )
  return count
}

/**
 * Bounds on the seqs of the receipts stamped in [since, until] (from the hours' min and max seq), or null
 * when no receipt is: a page by time then scans only that seq range, not every row of its partitions.
 */
export async function seqBounds(db: PgDatabase, since: number | undefined, until: number | undefined): Promise<{ min: number; max: number } | null> {
  const from = Math.floor((since ?? 0) / HOUR) * HOUR
  const to = until ?? LAST
  const row = await db.get<{ min: number | null; max: number | null }>('SELECT min(min_seq)::bigint AS min, max(max_seq)::bigint AS max FROM receipt_rollup_time WHERE hour >= $1 AND hour <= $2', [from, to])
  return row?.min == null || row.max == null ? null : { min: row.min, max: row.max }
}

// The parts of a window: whole hours from the rollups, partial hours scanned, and the receipts after the
// snapshot bound subtracted. Runs inside the caller's REPEATABLE READ transaction.
async function combine(
  tx: PgExecutor,
  filter: CorpusFilter,
  parts: { rolled: (from: number, to: number) => Promise<void>; scanned: (f: CorpusFilter, sign: 1 | -1) => Promise<void> },
): Promise<void> {
  const end = (await tx.get<{ end: number }>('SELECT coalesce(max(seq), 0)::bigint AS end FROM receipt_ids'))?.end ?? 0
  const { withCapability, withCost, subject } = filter
  const extra: CorpusFilter = {}
  if (subject !== undefined) extra.subject = subject
  if (withCapability !== undefined) extra.withCapability = withCapability
  if (withCost !== undefined) extra.withCost = withCost
  const lo = filter.since ?? 0
  const hi = Math.min(filter.until ?? LAST, LAST)
  const firstHour = Math.ceil(lo / HOUR) * HOUR
  const hoursEnd = Math.floor((hi + 1) / HOUR) * HOUR
  if (firstHour < hoursEnd) {
    await parts.rolled(firstHour, hoursEnd)
    if (lo < firstHour) await parts.scanned({ ...extra, since: lo, until: firstHour - 1, throughSeq: end }, 1)
    if (hoursEnd <= hi) await parts.scanned({ ...extra, since: hoursEnd, until: hi, throughSeq: end }, 1)
  } else {
    await parts.scanned({ ...extra, since: lo, until: hi, throughSeq: end }, 1)
  }
  if (filter.throughSeq !== undefined && filter.throughSeq < end) {
    await parts.scanned({ ...extra, since: filter.since, until: filter.until, afterSeq: filter.throughSeq, throughSeq: end }, -1)
  }
}

function rolledRows(tx: PgExecutor, grouping: CorpusGrouping, bucketSeconds: number, from: number, to: number): Promise<CorpusAggregateRow[]> {
  const where = 'WHERE hour >= $1 AND hour < $2'
  switch (grouping) {
    case 'none':
      return tx.all(`SELECT ${SUMS} FROM receipt_rollup_time ${where} HAVING count(*) > 0`, [from, to])
    case 'time':
      return tx.all(`SELECT hour - hour % $3 AS "bucketStart", ${SUMS} FROM receipt_rollup_time ${where} GROUP BY 1`, [from, to, bucketSeconds])
    case 'tool':
      return tx.all(`SELECT tool_server AS "toolServer", tool_name AS "toolName", ${SUMS} FROM receipt_rollup_tool ${where} GROUP BY 1, 2`, [from, to])
    case 'subject':
      return tx.all(`SELECT subject_key AS "subjectKey", capability_id AS "capabilityId", ${SUMS} FROM receipt_rollup_subject ${where} GROUP BY 1, 2`, [from, to])
    default:
      return tx.all(
        `SELECT capability_id AS "capabilityId", subject_key AS "subjectKey", cost_currency AS "costCurrency", ${SUMS} FROM receipt_rollup_cost ${where} GROUP BY 1, 2, 3`,
        [from, to],
      )
  }
}

function groupKey(grouping: CorpusGrouping): (row: CorpusAggregateRow) => string {
  switch (grouping) {
    case 'none':
      return () => ''
    case 'time':
      return row => String(row.bucketStart)
    case 'tool':
      return row => JSON.stringify([row.toolServer, row.toolName])
    case 'subject':
      return row => JSON.stringify([row.subjectKey ?? null, row.capabilityId ?? null])
    default:
      return row => JSON.stringify([row.capabilityId ?? null, row.subjectKey ?? null, row.costCurrency ?? null])
  }
}

function scaled(row: Totals, sign: 1 | -1): Totals {
  return Object.fromEntries(TOTALS.map(c => [c, sign * row[c]])) as unknown as Totals
}

function sum(a: Totals, b: Totals): Totals {
  return Object.fromEntries(TOTALS.map(c => [c, a[c] + b[c]])) as unknown as Totals
}
