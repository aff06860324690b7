// Budgets on PostgreSQL: invocation counters and cost totals, captured atomically across every
// trust-control node (spec 03: quota sets covering a request are authorized and captured atomically).
// A capture runs in one transaction that first makes sure each counter's row exists, then locks the rows
// (SELECT … FOR UPDATE, always in key order, counters before cost totals, so two captures never deadlock
// on each other), checks every counter and cost cap against the locked values, and advances them; a refused capture rolls back,
// leaving nothing behind. Two nodes capturing the last invocation at once: one waits for the other's
// lock, then sees its count, so the maximum is never exceeded.
//
// Captures run on a pool of their own (PgStoresOptions.capturePoolSize): captures queued on one busy
// counter hold connections, and nothing else (the revocation feed, queries, ingest) may wait behind them.
//
// A capture with an id (a fleet's sidecar sends one) first records the id in `budget_captures`, in the
// same transaction, so the counters and the record commit together: a retry under the id answers the
// recorded result, counting nothing more. `cancel` locks that record: a committed capture is reversed
// (counters and costs given back) and marked cancelled; an id not recorded yet is recorded cancelled, so
// the capture, landing later, finds it and is refused. Both take the record's row before any counter,
// in the same order as captures, so they never deadlock. A capture with a deadline rolls back instead of
// committing after it (lock waits and statements are bounded by it on the server too).
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import type { CostUsageRow, GrantUsageRow } from '../ports.js'
import { CaptureCancelledError, CaptureDeadlineError, StoreInputError } from '../errors.js'
import type { CapabilityUsage, CaptureCancelResult, CaptureOptions, TrustBudgetStore } from '../store-ports.js'
import { CAPTURE_ID_RETENTION_SECONDS, checkCaptureId, checkCapturePlan } from '../stores/store-input.js'
import { PgDeadlineError, type PgDatabase, type PgExecutor } from './pg-database.js'

// The refusal is the transaction's answer, but nothing it wrote may stay: thrown to roll back.
class CaptureRefused extends Error {
  constructor(readonly result: CaptureResult) {
    super('capture refused')
  }
}

const GRANT_COLUMNS = 'capability_id AS "capabilityId", grant_key AS "grantKey", used, max_invocations AS "maxInvocations", updated_at AS "updatedAt"'

// Old capture records are deleted at most this often (by the process that captures).
const PRUNE_EVERY_SECONDS = 60

export class PgBudgetStore implements TrustBudgetStore {
  readonly #db: PgDatabase
  readonly #captures: PgDatabase
  readonly #now: () => number
  #prunedAt = 0

  /** `captures` runs the captures and cancels (a pool of their own); `db` the reads. */
  constructor(db: PgDatabase, now: () => number, captures: PgDatabase = db) {
    this.#db = db
    this.#captures = captures
    this.#now = now
  }

  get isEphemeral(): boolean {
    return false
  }

  /** Always true: every capture is its own transaction (a failed one says so to its caller). */
  get healthy(): boolean {
    return true
  }

  /** Advances every counter of `plan` by one and adds its cost, all or nothing; resolves after commit. */
  async capture(plan: CapturePlan, options: CaptureOptions = {}): Promise<CaptureResult> {
    checkCapturePlan(plan)
    const captureId = options.captureId === undefined ? undefined : checkCaptureId(options.captureId)
    const at = this.#now()
    this.#prune(at)
    try {
      return await this.#captures.transaction(
        async tx => {
          if (captureId !== undefined) {
            const replay = await claimCaptureId(tx, captureId, plan, at)
            if (replay !== undefined) return replay
          }
          const result = await captureIn(tx, plan, at)
          if (captureId !== undefined) await tx.run('UPDATE budget_captures SET result = $2 WHERE capture_id = $1', [captureId, JSON.stringify(result)])
          return result
        },
        { deadlineAt: options.deadlineAt },
      )
    } catch (err) {
      if (err instanceof CaptureRefused) return err.result
      if (err instanceof PgDeadlineError) throw new CaptureDeadlineError(err.step)
      throw err
    }
  }

  /** Reverses the capture named `captureId`, or makes sure it never counts; idempotent. */
  async cancel(captureId: string): Promise<CaptureCancelResult> {
    checkCaptureId(captureId)
    const at = this.#now()
    const reversed = await this.#captures.transaction(async tx => {
      for (;;) {
        const row = await tx.get<{ state: string; plan: string | null }>('SELECT state, plan FROM budget_captures WHERE capture_id = $1 FOR UPDATE', [captureId])
        if (row === undefined) {
          // waits for a capture of this id still in flight: committed, it is found by the next look
          const recorded = await tx.run(
            "INSERT INTO budget_captures (capture_id, state, created_at) VALUES ($1, 'cancelled', $2) ON CONFLICT (capture_id) DO NOTHING",
            [captureId, at],
          )
          if (recorded === 1) return false
          continue
        }
        if (row.state === 'cancelled' || row.plan === null) return false
        await reverseIn(tx, JSON.parse(row.plan) as CapturePlan, at)
        await tx.run("UPDATE budget_captures SET state = 'cancelled' WHERE capture_id = $1", [captureId])
        return true
      }
    })
    return { captureId, reversed }
  }

  // Capture records are needed for retries and late cancels only: older ones are deleted now and then.
  #prune(at: number): void {
    if (at - this.#prunedAt < PRUNE_EVERY_SECONDS) return
    this.#prunedAt = at
    this.#db.run('DELETE FROM budget_captures WHERE created_at < $1', [at - CAPTURE_ID_RETENTION_SECONDS]).catch(() => undefined)
  }

  async usage(capabilityId: string): Promise<CapabilityUsage> {
    const grants = await this.#db.all<GrantUsageRow>(`SELECT ${GRANT_COLUMNS} FROM invocation_budgets WHERE capability_id = $1 ORDER BY grant_key`, [capabilityId])
    const costs = await this.#db.all<CostUsageRow>(
      `SELECT capability_id AS "capabilityId", grant_key AS "grantKey", currency, units, attempted_units AS "attemptedUnits", updated_at AS "updatedAt"
       FROM cost_usage WHERE capability_id = $1 ORDER BY grant_key, currency`,
      [capabilityId],
    )
    return { capabilityId, grants, costs }
  }

  async listGrants(limit = 50): Promise<GrantUsageRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreInputError('limit', 'a positive integer', limit)
    return this.#db.all<GrantUsageRow>(`SELECT ${GRANT_COLUMNS} FROM invocation_budgets ORDER BY updated_at DESC, capability_id, grant_key LIMIT $1`, [limit])
  }
}

// Records the id before anything is counted; undefined when it is new here. An id recorded before
// answers its capture's result (a retry), or is refused when it was cancelled.
async function claimCaptureId(tx: PgExecutor, captureId: string, plan: CapturePlan, at: number): Promise<CaptureResult | undefined> {
  const claimed = await tx.run(
    "INSERT INTO budget_captures (capture_id, state, plan, created_at) VALUES ($1, 'captured', $2, $3) ON CONFLICT (capture_id) DO NOTHING",
    [captureId, JSON.stringify(plan), at],
  )
  if (claimed === 1) return undefined
  const row = await tx.get<{ state: string; result: string | null }>('SELECT state, result FROM budget_captures WHERE capture_id = $1', [captureId])
  if (row === undefined || row.state === 'cancelled' || row.result === null) throw new CaptureCancelledError(captureId)
  return JSON.parse(row.result) as CaptureResult
}

// Gives back what `plan` captured: its counters' invocation, its costs' units (rows locked in the
// capture's order).
async function reverseIn(tx: PgExecutor, plan: CapturePlan, at: number): Promise<void> {
  const counters = [...plan.invocations].sort((a, b) => (a.owner === b.owner ? cmp(a.key, b.key) : cmp(a.owner, b.owner)))
  for (const c of counters) {
    await tx.run('UPDATE invocation_budgets SET used = greatest(used - 1, 0), updated_at = $3 WHERE capability_id = $1 AND grant_key = $2', [c.owner, c.key, at])
  }
  const keyOf = (c: { owner: string; key: string; currency: string }) => `${c.owner}\u0000${c.key}\u0000${c.currency}`
  for (const cost of [...plan.costs].sort((a, b) => cmp(keyOf(a), keyOf(b)))) {
    await tx.run('UPDATE cost_usage SET units = greatest(units - $4, 0), updated_at = $5 WHERE capability_id = $1 AND grant_key = $2 AND currency = $3', [cost.owner, cost.key, cost.currency, cost.units, at])
  }
}

async function captureIn(tx: PgExecutor, plan: CapturePlan, at: number): Promise<CaptureResult> {
  const counters = plan.invocations
  const used: number[] = []
  if (counters.length > 0) {
    // sorted: every capture creates and locks rows in the same order (counters, then cost totals)
    const keys = [...counters].sort((a, b) => (a.owner === b.owner ? cmp(a.key, b.key) : cmp(a.owner, b.owner)))
    await tx.run(
      `INSERT INTO invocation_budgets (capability_id, grant_key, used, max_invocations, updated_at)
       SELECT o, k, 0, m, $4 FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(o, k, m) ORDER BY o, k
       ON CONFLICT (capability_id, grant_key) DO NOTHING`,
      [keys.map(c => c.owner), keys.map(c => c.key), keys.map(c => c.max), at],
    )
    const rows = await tx.all<{ owner: string; key: string; used: number; max: number }>(
      `SELECT capability_id AS owner, grant_key AS key, used, max_invocations AS max FROM invocation_budgets
       WHERE (capability_id, grant_key) IN (SELECT * FROM unnest($1::text[], $2::text[])) ORDER BY capability_id, grant_key FOR UPDATE`,
      [keys.map(c => c.owner), keys.map(c => c.key)],
    )
    const state = new Map(rows.map(r => [`${r.owner}\u0000${r.key}`, r]))
    for (const [index, c] of counters.entries()) {
      const row = state.get(`${c.owner}\u0000${c.key}`)!
      // spec 03: every member of a delegation family carries the root's maximum; another one is refused
      if (c.fixedMax && row.max !== c.max) throw new CaptureRefused({ allowed: false, failed: { kind: 'max_mismatch', index, recordedMax: row.max } })
      // a zero maximum is valid and denies every capture (spec 03)
      if (row.used >= c.max) throw new CaptureRefused({ allowed: false, failed: { kind: 'invocation', index, used: row.used } })
      used.push(row.used + 1)
    }
  }
  const costUnits = await captureCosts(tx, plan.costs, at)
  for (const c of counters) {
    await tx.run('UPDATE invocation_budgets SET used = used + 1, max_invocations = $3, updated_at = $4 WHERE capability_id = $1 AND grant_key = $2', [c.owner, c.key, c.max, at])
  }
  return { allowed: true, used, costUnits }
}

// Checks every cost total against its cap, then adds to them (rows locked in key order, after the counters).
async function captureCosts(tx: PgExecutor, costs: CapturePlan['costs'], at: number): Promise<number[]> {
  if (costs.length === 0) return []
  const keyOf = (c: { owner: string; key: string; currency: string }) => `${c.owner}\u0000${c.key}\u0000${c.currency}`
  const sorted = [...costs].sort((a, b) => cmp(keyOf(a), keyOf(b)))
  await tx.run(
    `INSERT INTO cost_usage (capability_id, grant_key, currency, units, attempted_units, updated_at)
     SELECT o, k, c, 0, 0, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(o, k, c) ORDER BY o, k, c
     ON CONFLICT (capability_id, grant_key, currency) DO NOTHING`,
    [sorted.map(c => c.owner), sorted.map(c => c.key), sorted.map(c => c.currency), at],
  )
  const rows = await tx.all<{ owner: string; key: string; currency: string; units: number }>(
    `SELECT capability_id AS owner, grant_key AS key, currency, units FROM cost_usage
     WHERE (capability_id, grant_key, currency) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[])) ORDER BY capability_id, grant_key, currency FOR UPDATE`,
    [sorted.map(c => c.owner), sorted.map(c => c.key), sorted.map(c => c.currency)],
  )
  const charged = new Map(rows.map(r => [keyOf(r), Number(r.units)]))
  const totals = costs.map((cost, index) => {
    const before = charged.get(keyOf(cost)) ?? 0
    if (before + cost.units > cost.maxUnits) throw new CaptureRefused({ allowed: false, failed: { kind: 'cost', index, units: before } })
    return before + cost.units
  })
  for (const cost of costs) {
    await tx.run('UPDATE cost_usage SET units = units + $4, updated_at = $5 WHERE capability_id = $1 AND grant_key = $2 AND currency = $3', [cost.owner, cost.key, cost.currency, cost.units, at])
  }
  return totals
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
