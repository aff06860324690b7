// Weekly partitions of `receipts` (migration 4), created ahead on demand: before a batch is appended, the
// weeks its timestamps fall in, and each following week, get their partition if they have none yet, so
// the partition a week's receipts land in usually exists a week before the first of them arrives. A
// timestamp before 2000 or more than eight weeks ahead creates nothing (such a row lands in the DEFAULT
// partition rather than leaving a partition behind for a clock that was wrong). Creation is its own short
// transaction, outside the append's: two nodes racing create it once (the loser sees it exists). A node
// whose role may not create tables (docs/postgres.md: nodes may run with data privileges only) keeps
// appending: the week's rows land in the DEFAULT partition, said once per week in the log; `gate trust
// migrate` creates the coming weeks' partitions with the owner's role (`ensureAhead`).
import type { PgDatabase } from './pg-database.js'
import { RECEIPT_PARTITION_SECONDS } from './migrations/0004-partitioned-receipts.js'

const EARLIEST = 946_684_800 // 2000-01-01
const AHEAD_WEEKS = 8

/** The start of the partition week holding `timestamp`. */
export function partitionStart(timestamp: number): number {
  return timestamp - (((timestamp % RECEIPT_PARTITION_SECONDS) + RECEIPT_PARTITION_SECONDS) % RECEIPT_PARTITION_SECONDS)
}

/** The partitions this process knows exist (or gave up on: their rows go to the default partition). */
export class ReceiptPartitions {
  readonly #db: PgDatabase
  readonly #now: () => number
  readonly #log: (line: string) => void
  readonly #known = new Set<number>()

  constructor(db: PgDatabase, options: { now?: () => number; log?: (line: string) => void } = {}) {
    this.#db = db
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.#log = options.log ?? (() => undefined)
  }

  /** Makes sure the weeks of `timestamps`, and the week after each, have their partition. */
  async ensure(timestamps: Iterable<number>): Promise<void> {
    const latest = this.#now() + AHEAD_WEEKS * RECEIPT_PARTITION_SECONDS
    const wanted = new Set<number>()
    for (const ts of timestamps) {
      const start = partitionStart(ts)
      for (const week of [start, start + RECEIPT_PARTITION_SECONDS]) if (!this.#known.has(week) && week >= EARLIEST && week < latest) wanted.add(week)
    }
    if (wanted.size === 0) return
    const existing = await this.#db.all<{ name: string }>("SELECT relname AS name FROM pg_class WHERE relname LIKE 'receipts\\_w%' AND relkind = 'r'")
    for (const row of existing) this.#known.add(Number(row.name.slice('receipts_w'.length)))
    for (const week of wanted) {
      if (this.#known.has(week)) continue
      try {
        await this.#db.run(`CREATE TABLE IF NOT EXISTS receipts_w${week} PARTITION OF receipts FOR VALUES FROM (${week}) TO (${week + RECEIPT_PARTITION_SECONDS})`)
        this.#known.add(week)
      } catch (err) {
        const code = sqlState(err)
        // another node created it meanwhile (duplicate), or the default partition already holds rows of
        // that week (check violation): either way the rows have a home
        if (code === '42P07' || code === '23505' || code === '23514' || code === '42501') {
          this.#known.add(week)
          if (code === '23514') this.#log(`receipts partition for week ${week} not created: the default partition holds rows of that week; they stay there`)
          if (code === '42501') {
            this.#log(
              `receipts partition for week ${week} not created: this role may not create tables, so that week's receipts go to the default partition; ` +
                'give the role CREATE on the schema, or run `gate trust migrate` as the owner at least every eight weeks (it creates the coming weeks)',
            )
          }
          continue
        }
        throw err
      }
    }
  }
}

/** Creates the partitions of this week and the next seven (as far ahead as `ensure` ever creates). */
export async function ensurePartitionsAhead(db: PgDatabase, now = Math.floor(Date.now() / 1000)): Promise<number> {
  const weeks = Array.from({ length: AHEAD_WEEKS }, (_, k) => now + k * RECEIPT_PARTITION_SECONDS)
  await new ReceiptPartitions(db, { now: () => now }).ensure(weeks)
  return partitionStart(now) + AHEAD_WEEKS * RECEIPT_PARTITION_SECONDS
}

// The SQLSTATE of a driver error, also when wrapped in a store error (its cause).
function sqlState(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e !== undefined && e !== null; e = e.cause as typeof e) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code
  }
  return undefined
}
