// How a trust-control query reads the receipts table (receipt-query.ts runs the plans). SQLite without
// ANALYZE statistics guesses poorly between usable indexes, so each plan names its access path: seeks
// bucket by bucket for the selective filters, the covering time index for counts and aggregates, or a
// walk in seq order from the cursor.
import type { CorpusFilter, CorpusRow } from '@gate/trust'
import { ID_BUCKET_ROWS } from './receipt-log.js'
import type { SqlValue } from './sqlite-driver.js'

/** What the statement is for: a page ascending or descending, a count, an aggregate. */
export type Purpose = 'page' | 'page-desc' | 'count' | 'aggregate'

/** A filter, or one branch of an agent filter (subject key, or lineage ids for rows without one). */
export type BranchFilter = CorpusFilter & { subjectOnly?: string; lineageIds?: readonly string[] }

// A seq range this short is cheaper to walk by rowid than through any index (count-cache deltas).
const SHORT_SEQ_RANGE = 20_000

/** The covering time index (RECEIPT_TRUST_INDEXES). */
export const COVERING = 'receipts_by_time_covering'
const BUCKETS = { capability: 'receipts_by_capability_bucket', subject: 'receipts_by_subject_bucket', tenant: 'receipts_by_tenant_bucket' } as const

type Driver =
  | { kind: 'seq' }
  | { kind: 'time' }
  | { kind: 'cost' }
  | { kind: 'bucket'; index: string; column: 'capability_id' | 'subject_key' | 'tenant'; values: readonly string[] }

/** The parts of a statement over the receipts table. */
export interface QueryPlan {
  /** The WITH clause (bucket list), or empty. */
  with: string
  from: string
  where: string
  params: SqlValue[]
  bucketed: boolean
}

// Which access path leads. SQLite without ANALYZE statistics guesses poorly between usable indexes, so
// the plan names one: the leading terms are written plainly, every other as `+column` (which SQLite
// cannot match to an index). Seeks for the selective filters (capability, agent, tenant) go bucket by
// bucket; counts and aggregates otherwise read the covering time index alone; pages otherwise walk
// the table in seq order from the cursor (with a time filter, inside the window's seq range).
function chooseDriver(f: BranchFilter, purpose: Purpose, indexes: ReadonlySet<string>): Driver {
  const bucket = (name: keyof typeof BUCKETS, column: 'capability_id' | 'subject_key' | 'tenant', values: readonly string[]): Driver | undefined =>
    indexes.has(BUCKETS[name]) ? { kind: 'bucket', index: BUCKETS[name], column, values } : undefined
  if (f.afterSeq !== undefined && f.throughSeq !== undefined && f.throughSeq - f.afterSeq <= SHORT_SEQ_RANGE) return { kind: 'seq' }
  const selective =
    (f.capabilityId !== undefined ? bucket('capability', 'capability_id', [f.capabilityId]) : undefined) ??
    (f.lineageIds !== undefined ? bucket('capability', 'capability_id', f.lineageIds) : undefined) ??
    (f.subjectOnly !== undefined ? bucket('subject', 'subject_key', [f.subjectOnly]) : undefined)
  if (selective !== undefined) return selective
  const tenant = f.tenant !== undefined ? bucket('tenant', 'tenant', [f.tenant]) : undefined
  if (purpose === 'page') return tenant ?? { kind: 'seq' }
  if (purpose === 'page-desc') return { kind: 'seq' }
  const window = f.since !== undefined || f.until !== undefined
  if (purpose === 'count' && !window && (f.costCurrency !== undefined || f.withCost === true) && indexes.has('receipts_by_cost')) return { kind: 'cost' }
  const onlyTenant = Object.entries(f).every(([k, v]) => v === undefined || ['tenant', 'afterSeq', 'throughSeq'].includes(k))
  if (purpose === 'count' && onlyTenant && tenant !== undefined) return tenant
  if (indexes.has(COVERING)) return { kind: 'time' }
  return tenant ?? { kind: 'seq' }
}

// The agent filter is an OR of two access paths (the stored subject key, or the lineage join on
// capability ids for rows without one); as two disjoint branches each keeps its index and seq order.
export function subjectBranches(f: CorpusFilter): BranchFilter[] {
  if (f.subject === undefined || f.capabilityId !== undefined) return [f]
  const { subject, ...rest } = f
  const branches: BranchFilter[] = [{ ...rest, subjectOnly: subject.subjectKey }]
  if (subject.capabilityIds.length > 0) branches.push({ ...rest, lineageIds: subject.capabilityIds })
  return branches
}

/** The plan of `f` for `purpose`, given the index names present and the last bucket to probe. */
export function planQuery(f: BranchFilter, purpose: Purpose, indexes: ReadonlySet<string>, maxBucket: number): QueryPlan {
  const driver = chooseDriver(f, purpose, indexes)
  const terms: string[] = []
  const params: SqlValue[] = []
  const add = (term: string, ...values: SqlValue[]) => {
    terms.push(term)
    params.push(...values)
  }
  const time = driver.kind === 'time'
  const cost = driver.kind === 'cost'
  const bucketColumn = driver.kind === 'bucket' ? driver.column : undefined
  // the driver's own columns are matched in the join (bucket plans) or written plainly
  if (f.capabilityId !== undefined && bucketColumn !== 'capability_id') add('+capability_id = ?', f.capabilityId)
  if (f.toolServer !== undefined) add('+tool_server = ?', f.toolServer)
  if (f.toolName !== undefined) add('+tool_name = ?', f.toolName)
  if (f.outcome !== undefined) add('+outcome = ?', f.outcome)
  if (f.tenant !== undefined && bucketColumn !== 'tenant') add('+tenant = ?', f.tenant)
  if (f.since !== undefined) add(`${time ? '' : '+'}timestamp >= ?`, f.since)
  if (f.until !== undefined) add(`${time ? '' : '+'}timestamp <= ?`, f.until)
  // Plain cost terms imply `cost_units IS NOT NULL`, which is what lets SQLite use the partial index.
  const c = cost ? '' : '+'
  if (f.costCurrency !== undefined) add(`${c}cost_currency = ? AND ${c}cost_units IS NOT NULL`, f.costCurrency)
  if (f.minCost !== undefined) add(`${c}cost_units >= ?`, f.minCost)
  if (f.maxCost !== undefined) add(`${c}cost_units <= ?`, f.maxCost)
  if (f.withCost === true) add(`${c}cost_units IS NOT NULL`)
  if (f.withCapability === true) add('+capability_id IS NOT NULL')
  if (f.subjectOnly !== undefined && bucketColumn !== 'subject_key') add('+subject_key = ?', f.subjectOnly)
  if (f.lineageIds !== undefined) {
    add('+subject_key IS NULL')
    if (bucketColumn !== 'capability_id') add(`+capability_id IN (${f.lineageIds.map(() => '?').join(', ')})`, ...f.lineageIds)
  }
  if (f.subject !== undefined && f.subjectOnly === undefined && f.lineageIds === undefined) {
    const ids = f.subject.capabilityIds
    const lineage = ids.length === 0 ? '' : ` OR (+subject_key IS NULL AND +capability_id IN (${ids.map(() => '?').join(', ')}))`
    add(`(+subject_key = ?${lineage})`, f.subject.subjectKey, ...ids)
  }
  if (f.afterSeq !== undefined) add('seq > ?', f.afterSeq)
  if (f.throughSeq !== undefined) add('seq <= ?', f.throughSeq)
  const where = terms.length === 0 ? '' : `WHERE ${terms.join(' AND ')}`
  if (driver.kind === 'bucket') {
    // Probe (bucket, value) for every bucket in one statement; CROSS JOIN keeps the bucket list the outer
    // loop. Buckets start at 0: one seek each, and rows of an older file whose writer guessed a bucket
    // low are still found. (`bucket` has only column `b`, so receipt columns need no qualifier.)
    const match = driver.values.length === 1 ? '= ?' : `IN (${driver.values.map(() => '?').join(', ')})`
    return {
      with: 'WITH RECURSIVE bucket(b) AS (SELECT 0 UNION ALL SELECT b + 1 FROM bucket WHERE b < ?) ',
      from: `FROM bucket CROSS JOIN receipts AS r INDEXED BY ${driver.index} ON r.id_bucket = bucket.b AND r.${driver.column} ${match}`,
      where,
      params: [maxBucket, ...driver.values, ...params],
      bucketed: true,
    }
  }
  const from = time ? `FROM receipts INDEXED BY ${COVERING}` : cost ? 'FROM receipts INDEXED BY receipts_by_cost' : 'FROM receipts'
  return { with: '', from, where, params, bucketed: false }
}

/** True for a time window that ends before it starts. */
export function emptyWindow(f: CorpusFilter): boolean {
  return f.since !== undefined && f.until !== undefined && f.since > f.until
}

// Bucket order is seq order when every row sits in its exact bucket (a file written by an older
// binary with several writers may hold rows in a lower bucket); anything else is re-read sorted.
export function isBucketOrdered(rows: (CorpusRow & { idBucket?: number })[]): boolean {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    if (row.idBucket !== Math.floor(row.seq / ID_BUCKET_ROWS)) return false
    if (i > 0 && row.seq <= rows[i - 1]!.seq) return false
    delete row.idBucket
  }
  return true
}
