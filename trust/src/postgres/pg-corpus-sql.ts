// The SQL of corpus filters and aggregates over `receipts` on PostgreSQL, shared by the reader
// (pg-receipt-query.ts) and the rollup reader (pg-receipt-rollup.ts). Every value is a numbered parameter.
import type { CorpusAggregateRow, CorpusFilter, CorpusGrouping } from '../ports.js'
import { StoreInputError } from '../errors.js'
import type { PgExecutor, PgValue } from './pg-database.js'

export const METRICS = `count(*) AS total, count(*) FILTER (WHERE outcome = 'allow') AS allow, count(*) FILTER (WHERE outcome = 'deny') AS deny,
  count(*) FILTER (WHERE outcome = 'cancelled') AS cancelled, count(*) FILTER (WHERE outcome = 'incomplete') AS incomplete,
  coalesce(sum(cost_units), 0) AS charged, coalesce(sum(attempted_cost_units), 0) AS attempted`

/** A WHERE clause and its parameters; `param` numbers further values after the filter's. */
export class SqlWhere {
  readonly terms: string[] = []
  readonly params: PgValue[] = []

  /** The placeholder of a new parameter holding `value`. */
  param(value: PgValue): string {
    this.params.push(value)
    return `$${this.params.length}`
  }

  add(term: string): void {
    this.terms.push(term)
  }

  get sql(): string {
    return this.terms.length === 0 ? '' : `WHERE ${this.terms.join(' AND ')}`
  }
}

/** A corpus filter plus the agent route's second half: rows without a subject key, by capability. */
export type PgCorpusFilter = CorpusFilter & { lineageOf?: readonly string[] }

/** The WHERE clause of a corpus filter (spec 03 semantics: AND, inclusive bounds). */
export function corpusWhere(f: PgCorpusFilter): SqlWhere {
  const w = new SqlWhere()
  if (f.capabilityId !== undefined) w.add(`capability_id = ${w.param(f.capabilityId)}`)
  if (f.toolServer !== undefined) w.add(`tool_server = ${w.param(f.toolServer)}`)
  if (f.toolName !== undefined) w.add(`tool_name = ${w.param(f.toolName)}`)
  if (f.outcome !== undefined) w.add(`outcome = ${w.param(f.outcome)}`)
  if (f.tenant !== undefined) w.add(`tenant = ${w.param(f.tenant)}`)
  if (f.since !== undefined) w.add(`timestamp >= ${w.param(f.since)}`)
  if (f.until !== undefined) w.add(`timestamp <= ${w.param(f.until)}`)
  if (f.costCurrency !== undefined) w.add(`cost_currency = ${w.param(f.costCurrency)} AND cost_units IS NOT NULL`)
  if (f.minCost !== undefined) w.add(`cost_units >= ${w.param(f.minCost)}`)
  if (f.maxCost !== undefined) w.add(`cost_units <= ${w.param(f.maxCost)}`)
  if (f.withCost === true) w.add('cost_units IS NOT NULL')
  if (f.withCapability === true) w.add('capability_id IS NOT NULL')
  if (f.subject !== undefined) {
    const key = w.param(f.subject.subjectKey)
    const ids = f.subject.capabilityIds
    w.add(ids.length === 0 ? `subject_key = ${key}` : `(subject_key = ${key} OR (subject_key IS NULL AND capability_id = ANY(${w.param(ids)}::text[])))`)
  }
  if (f.lineageOf !== undefined) w.add(`subject_key IS NULL AND capability_id = ANY(${w.param(f.lineageOf as string[])}::text[])`)
  if (f.afterSeq !== undefined) w.add(`seq > ${w.param(f.afterSeq)}`)
  if (f.throughSeq !== undefined) w.add(`seq <= ${w.param(f.throughSeq)}`)
  return w
}

/** True when no timestamp can lie in the window. */
export function isEmptyWindow(f: CorpusFilter): boolean {
  return f.since !== undefined && f.until !== undefined && f.since > f.until
}

/** Counts and cost sums of the receipts matching `filter`, read from the receipts (no rollup). */
export async function scanAggregate(exec: PgExecutor, filter: CorpusFilter, grouping: CorpusGrouping, bucketSeconds = 86400, perBucket = false): Promise<CorpusAggregateRow[]> {
  if (!Number.isSafeInteger(bucketSeconds) || bucketSeconds < 1) throw new StoreInputError('bucketSeconds', 'a positive integer', bucketSeconds)
  if (isEmptyWindow(filter)) return []
  const w = corpusWhere(filter)
  const split = perBucket && grouping !== 'none' && grouping !== 'time'
  const bucketExpr = () => `timestamp - timestamp % ${w.param(bucketSeconds)}`
  const bucket = split ? `${bucketExpr()} AS "bucketStart", ` : ''
  const keys = (n: number) => Array.from({ length: n + (split ? 1 : 0) }, (_, i) => i + 1).join(', ')
  let sql: string
  switch (grouping) {
    case 'none':
      sql = `SELECT ${METRICS} FROM receipts ${w.sql}`
      break
    case 'time':
      sql = `SELECT ${bucketExpr()} AS "bucketStart", ${METRICS} FROM receipts ${w.sql} GROUP BY 1`
      break
    case 'tool':
      sql = `SELECT ${bucket}tool_server AS "toolServer", tool_name AS "toolName", ${METRICS} FROM receipts ${w.sql} GROUP BY ${keys(2)}`
      break
    case 'subject':
      sql = `SELECT ${bucket}subject_key AS "subjectKey", CASE WHEN subject_key IS NULL THEN capability_id END AS "capabilityId", ${METRICS}
        FROM receipts ${w.sql} GROUP BY ${keys(2)}`
      break
    case 'cost':
      w.add('(cost_units IS NOT NULL OR attempted_cost_units IS NOT NULL)')
      sql = `SELECT ${bucket}capability_id AS "capabilityId", subject_key AS "subjectKey", cost_currency AS "costCurrency", ${METRICS}
        FROM receipts ${w.sql} GROUP BY ${keys(3)}`
      break
    default:
      throw new StoreInputError('grouping', 'none, time, tool, subject or cost', grouping)
  }
  const rows = await exec.all<CorpusAggregateRow>(sql, w.params)
  return rows.filter(r => r.total > 0)
}

/** Matches of `filter` counted over the receipts (no rollup). */
export async function scanCount(exec: PgExecutor, filter: PgCorpusFilter): Promise<number> {
  if (isEmptyWindow(filter)) return 0
  const w = corpusWhere(filter)
  return (await exec.get<{ n: number }>(`SELECT count(*) AS n FROM receipts ${w.sql}`, w.params))?.n ?? 0
}
