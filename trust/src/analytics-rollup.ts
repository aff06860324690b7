// An incremental rollup of the receipt corpus for analytics without receipt-level filters (the whole
// corpus or a time window: the operator's dashboard query). Aggregating a million receipts in SQLite
// costs about a second per grouping (its GROUP BY inserts every row into a temporary B-tree), so the
// rollup keeps per-hour totals and per-day totals by tool and by agent in memory, and brings them up to
// date by aggregating only the receipts appended since (seq > the last one it saw): receipts never
// change or disappear, so adding new groups to old ones is exact. A window's whole hours and days come
// from the rollup, its partial first and last day from SQL over those few hours.
//
// Requests with a capability, agent or tool filter never use it (their receipt sets are small and the
// indexes serve them directly). Past `maxEntries` groups the rollup switches itself off (memory bound).
import type { CorpusAggregateRow, CorpusFilter, ReceiptCorpusPort } from './ports.js'

const HOUR = 3600
const DAY = 86400

type Totals = Pick<CorpusAggregateRow, 'total' | 'allow' | 'deny' | 'cancelled' | 'incomplete' | 'charged' | 'attempted'>

/** The grouped rows analytics needs, shaped like the corpus aggregates. */
export interface AnalyticsRows {
  timeRows: CorpusAggregateRow[]
  toolRows: CorpusAggregateRow[]
  subjectRows: CorpusAggregateRow[]
}

export interface AnalyticsRollupOptions {
  /** Groups kept before the rollup turns itself off, default 1,000,000. */
  maxEntries?: number
  log?: (line: string) => void
}

interface DayCell {
  tools: Map<string, CorpusAggregateRow>
  subjects: Map<string, CorpusAggregateRow>
}

export class AnalyticsRollup {
  readonly #corpus: ReceiptCorpusPort
  readonly #maxEntries: number
  readonly #log: (line: string) => void
  readonly #hours = new Map<string, CorpusAggregateRow>()
  readonly #days = new Map<number, DayCell>()
  #through = 0
  #entries = 0
  #disabled = false
  #chain: Promise<unknown> = Promise.resolve()

  constructor(corpus: ReceiptCorpusPort, options: AnalyticsRollupOptions = {}) {
    this.#corpus = corpus
    this.#maxEntries = options.maxEntries ?? 1_000_000
    this.#log = options.log ?? (() => undefined)
  }

  /** The highest seq folded in. */
  get through(): number {
    return this.#through
  }

  get enabled(): boolean {
    return !this.#disabled
  }

  /** True when the rollup can answer for `filter`: no receipt-level filter beyond a time window. */
  static covers(filter: CorpusFilter): boolean {
    return Object.entries(filter).every(([key, value]) => value === undefined || key === 'since' || key === 'until' || key === 'throughSeq')
  }

  /** Folds in every receipt committed so far (in the background at startup). */
  warm(): Promise<void> {
    return this.#serialize(async () => {
      await this.#refresh(await this.#corpus.latestSeq())
    })
  }

  /**
   * The analytics rows of the window [since, until] (inclusive, either open) for time buckets of
   * `bucketSeconds` (3600 or 86400), over the receipts committed up to at least `snapshot`; undefined
   * when the rollup is off.
   */
  rows(since: number | undefined, until: number | undefined, snapshot: number, bucketSeconds: number): Promise<AnalyticsRows | undefined> {
    return this.#serialize(async () => {
      if (!(await this.#refresh(snapshot))) return undefined
      // The rollup may have been brought past `snapshot` by another request: edges use the same bound.
      const through = this.#through
      const lo = since ?? 0
      const hi = until ?? Number.MAX_SAFE_INTEGER
      const edge = (from: number, to: number): CorpusFilter | undefined => (from > to ? undefined : { since: from, until: to, throughSeq: through })

      // whole hours from the rollup, partial hours at either end from SQL
      const firstHour = Math.ceil(lo / HOUR) * HOUR
      const hoursEnd = Math.floor((hi + 1) / HOUR) * HOUR
      const hourly: CorpusAggregateRow[] = []
      if (firstHour < hoursEnd) {
        for (const row of this.#hours.values()) if (row.bucketStart! >= firstHour && row.bucketStart! < hoursEnd) hourly.push(row)
        for (const f of [edge(lo, firstHour - 1), edge(hoursEnd, hi)]) if (f !== undefined) hourly.push(...(await this.#corpus.aggregate(f, 'time', HOUR)))
      } else {
        hourly.push(...(await this.#corpus.aggregate({ since: lo, until: hi, throughSeq: through }, 'time', HOUR)))
      }
      const timeRows = bucketSeconds === HOUR ? mergeBy(hourly, r => String(r.bucketStart)) : mergeBy(hourly.map(r => ({ ...r, bucketStart: r.bucketStart! - (r.bucketStart! % bucketSeconds) })), r => String(r.bucketStart))

      // whole days from the rollup, partial days at either end from SQL
      const firstDay = Math.ceil(lo / DAY) * DAY
      const daysEnd = Math.floor((hi + 1) / DAY) * DAY
      const tools: CorpusAggregateRow[] = []
      const subjects: CorpusAggregateRow[] = []
      const edges = firstDay < daysEnd ? [edge(lo, firstDay - 1), edge(daysEnd, hi)] : [edge(lo, hi)]
      if (firstDay < daysEnd) {
        for (const [start, cell] of this.#days) {
          if (start < firstDay || start >= daysEnd) continue
          tools.push(...cell.tools.values())
          subjects.push(...cell.subjects.values())
        }
      }
      for (const f of edges) {
        if (f === undefined) continue
        tools.push(...(await this.#corpus.aggregate(f, 'tool')))
        subjects.push(...(await this.#corpus.aggregate(f, 'subject')))
      }
      return {
        timeRows,
        toolRows: mergeBy(tools, toolKey),
        subjectRows: mergeBy(subjects, subjectKey),
      }
    })
  }

  #serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn)
    this.#chain = run.catch(() => undefined)
    return run
  }

  // Folds in the receipts with seq in (through, snapshot]; false when the rollup is off.
  async #refresh(snapshot: number): Promise<boolean> {
    if (this.#disabled) return false
    if (snapshot <= this.#through) return true
    const delta: CorpusFilter = { afterSeq: this.#through, throughSeq: snapshot }
    const [hours, tools, subjects] = await Promise.all([
      this.#corpus.aggregate(delta, 'time', HOUR),
      this.#corpus.aggregate(delta, 'tool', DAY, true),
      this.#corpus.aggregate(delta, 'subject', DAY, true),
    ])
    for (const row of hours) this.#add(this.#hours, String(row.bucketStart), row)
    for (const row of tools) this.#add(this.#day(row.bucketStart!).tools, toolKey(row), row)
    for (const row of subjects) this.#add(this.#day(row.bucketStart!).subjects, subjectKey(row), row)
    this.#through = snapshot
    if (this.#entries > this.#maxEntries) {
      this.#disabled = true
      this.#hours.clear()
      this.#days.clear()
      this.#log(`analytics rollup switched off: more than ${this.#maxEntries} groups; analytics aggregates every request in SQL`)
      return false
    }
    return true
  }

  #day(start: number): DayCell {
    let cell = this.#days.get(start)
    if (cell === undefined) this.#days.set(start, (cell = { tools: new Map(), subjects: new Map() }))
    return cell
  }

  // Adds `row`'s totals to the group at `key`.
  #add(map: Map<string, CorpusAggregateRow>, key: string, row: CorpusAggregateRow): void {
    const existing = map.get(key)
    if (existing !== undefined) {
      addInto(existing, row)
      return
    }
    this.#entries++
    map.set(key, { ...row })
  }
}

function toolKey(row: CorpusAggregateRow): string {
  return JSON.stringify([row.toolServer, row.toolName])
}

function subjectKey(row: CorpusAggregateRow): string {
  return JSON.stringify([row.subjectKey ?? null, row.capabilityId ?? null])
}

function addInto(target: Totals, row: Totals): void {
  target.total += row.total
  target.allow += row.allow
  target.deny += row.deny
  target.cancelled += row.cancelled
  target.incomplete += row.incomplete
  target.charged += row.charged
  target.attempted += row.attempted
}

function mergeBy(rows: readonly CorpusAggregateRow[], key: (row: CorpusAggregateRow) => string): CorpusAggregateRow[] {
  const merged = new Map<string, CorpusAggregateRow>()
  for (const row of rows) {
    const k = key(row)
    const existing = merged.get(k)
    if (existing === undefined) merged.set(k, { ...row })
    else addInto(existing, row)
  }
  return [...merged.values()]
}
