// The budget store (revision 10): invocation counts per capability grant (and per delegation link,
// under `link:<id>`, docs/capabilities.md), and charged / attempted cost for reports. `tryConsume` is
// atomic twice over: the single writer serializes every update, and each update is one conditional
// upsert (`... WHERE used < max`), so two processes sharing the file cannot overspend either. `capture`
// advances a set of counters (and capped cost totals) all or none: its reads and writes run in one
// write transaction (BEGIN IMMEDIATE), so no other writer, in this process or another, comes between
// the check and the count. Both resolve only after commit, so a crash never allows one invocation more
// than max.
//
// Captures by id (gate trust serve on SQLite, for a fleet's sidecars: store-ports.ts CaptureOptions) are
// recorded in `budget_captures`, created on first use and not part of revision 10 (like the receipt
// file's listed_receipts): the record commits with the counters, a retry answers it, a cancel reverses
// the capture or, arriving first, refuses it. A capture with a deadline (its sender stops waiting then)
// never commits past it: refused without a write when it is past as the capture is applied (after the
// write lock was taken), and looked at again just before COMMIT, where a capture that ran out meanwhile
// is rolled back (a savepoint) and the rest of its batch applied again without it.
import { CaptureCancelledError, CaptureDeadlineError } from '@gate/trust'
import { StoreInputError } from '../errors.js'
import { openStoreDatabase, type StoreSchema } from './revision-stamp.js'
import { resolveDatabaseOptions, type DatabaseOptions, type SqliteDatabase, type SqliteExecutor } from './sqlite-driver.js'
import { TransactionalStore } from './transactional-store.js'
import { checkFunctionOption, pickOptions, unixNow } from './store-options.js'
import type { CaptureResult, CapturePlan } from '@gate/sdk'
import {
  CAPTURE_ID_RETENTION_SECONDS,
  checkCaptureId,
  checkCapturePlan,
  type CapabilityUsage,
  type CaptureCancelResult,
  type CaptureOptions,
  type CostUsageRow,
  type GrantUsageRow,
  type TrustBudgetStore,
} from '@gate/trust'

/** Options of `openBudgetStore`. */
export interface BudgetStoreOptions extends DatabaseOptions {
  /** Clock in Unix seconds, default the system clock. */
  now?: () => number
  /** Largest group-commit batch, default 512. */
  maxBatchSize?: number
  /** Monotonic milliseconds compared with a capture's `deadlineAt`, default `performance.now`; injectable for tests. */
  clock?: () => number
}

/** What `tryConsume` decided: `used` counts allowed invocations, including this one when allowed. */
export interface ConsumeResult {
  allowed: boolean
  used: number
}

/** A cost to add to a grant's totals. */
export interface CostRecord {
  capabilityId: string
  grantKey: string
  /** Charged minor units. */
  units: number
  /** Three uppercase ASCII letters. */
  currency: string
  /** Minor units attempted but not charged (denied or failed), default 0. */
  attemptedUnits?: number
}

/** Schema revision 10. */
export const BUDGET_SCHEMA: StoreSchema = Object.freeze({
  store: 'budgets',
  create: [
    `CREATE TABLE invocation_budgets (
      capability_id TEXT NOT NULL,
      grant_key TEXT NOT NULL,
      used INTEGER NOT NULL,
      max_invocations INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (capability_id, grant_key)
    ) WITHOUT ROWID`,
    `CREATE TABLE cost_usage (
      capability_id TEXT NOT NULL,
      grant_key TEXT NOT NULL,
      currency TEXT NOT NULL,
      units INTEGER NOT NULL,
      attempted_units INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (capability_id, grant_key, currency)
    ) WITHOUT ROWID`,
  ],
  migrations: [],
})

type BudgetWrite =
  | { type: 'consume'; capabilityId: string; grantKey: string; maxInvocations: number; at: number }
  | { type: 'cost'; cost: Required<CostRecord>; at: number }
  | { type: 'capture'; plan: CapturePlan; at: number; captureId?: string; deadlineAt?: number }
  | { type: 'cancel'; captureId: string; at: number }

type BudgetResult = ConsumeResult | CaptureResult | CaptureCancelResult | Error | undefined

const CAPTURES_TABLE = `CREATE TABLE IF NOT EXISTS budget_captures (
  capture_id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('captured', 'cancelled')),
  plan TEXT,
  result TEXT,
  created_at INTEGER NOT NULL
) WITHOUT ROWID`

// One statement decides and counts: the row is created at 1 or incremented only while below the maximum.
const CONSUME_SQL = `INSERT INTO invocation_budgets (capability_id, grant_key, used, max_invocations, updated_at)
  VALUES (?, ?, 1, ?, ?)
  ON CONFLICT (capability_id, grant_key) DO UPDATE
    SET used = used + 1, max_invocations = excluded.max_invocations, updated_at = excluded.updated_at
    WHERE invocation_budgets.used < excluded.max_invocations
  RETURNING used`

const COST_SQL = `INSERT INTO cost_usage (capability_id, grant_key, currency, units, attempted_units, updated_at)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (capability_id, grant_key, currency) DO UPDATE
    SET units = units + excluded.units, attempted_units = attempted_units + excluded.attempted_units, updated_at = excluded.updated_at`

const CURRENCY = /^[A-Z]{3}$/

/** Opens (creating or migrating) the budget store. */
export async function openBudgetStore(path: string, options: BudgetStoreOptions = {}): Promise<BudgetStore> {
  const { own, database } = pickOptions('budget store options', options, ['now', 'maxBatchSize', 'clock'])
  checkFunctionOption('budget store options.now', own.now)
  checkFunctionOption('budget store options.clock', own.clock)
  const db = await openStoreDatabase(BUDGET_SCHEMA, path, resolveDatabaseOptions(database))
  return new BudgetStore(db, own.now ?? unixNow, own.maxBatchSize, own.clock)
}

/** Durable invocation and cost accounting for capability grants. */
export class BudgetStore extends TransactionalStore<BudgetWrite, BudgetResult> implements TrustBudgetStore {
  readonly #now: () => number

  constructor(db: SqliteDatabase, now: () => number, maxBatchSize?: number, clock: () => number = () => performance.now()) {
    super(db, 'budgets', 'budget update', (tx, writes) => commitWrites(tx, writes, clock), maxBatchSize)
    this.#now = now
  }

  /** Counts one invocation of a grant if fewer than `maxInvocations` were allowed; resolves after commit. */
  async tryConsume(capabilityId: string, grantKey: string, maxInvocations: number): Promise<ConsumeResult> {
    checkKey('capabilityId', capabilityId)
    checkKey('grantKey', grantKey)
    if (!Number.isSafeInteger(maxInvocations) || maxInvocations < 0) {
      throw new StoreInputError('maxInvocations', 'a non-negative integer', maxInvocations)
    }
    const result = await this.queue.enqueue({ type: 'consume', capabilityId, grantKey, maxInvocations, at: this.#now() })
    return result as ConsumeResult
  }

  /**
   * Advances every invocation counter of `plan` by one and adds each of its costs, only if each counter
   * is below its maximum (a `fixedMax` counter also only at the maximum it was created with) and each
   * cost total stays within its cap; otherwise changes nothing and says which one stopped it. Resolves
   * after commit.
   */
  async capture(plan: CapturePlan, options: CaptureOptions = {}): Promise<CaptureResult> {
    checkCapturePlan(plan)
    const captureId = options.captureId === undefined ? undefined : checkCaptureId(options.captureId)
    const result = await this.queue.enqueue({ type: 'capture', plan, at: this.#now(), captureId, deadlineAt: options.deadlineAt })
    if (result instanceof Error) throw result
    return result as CaptureResult
  }

  /** Reverses the capture named `captureId`, or records it so that it never counts; idempotent. */
  async cancel(captureId: string): Promise<CaptureCancelResult> {
    checkCaptureId(captureId)
    return (await this.queue.enqueue({ type: 'cancel', captureId, at: this.#now() })) as CaptureCancelResult
  }

  /** Adds charged (and attempted) cost to a grant's totals; resolves after commit. */
  async recordCost(cost: CostRecord): Promise<void> {
    checkKey('capabilityId', cost.capabilityId)
    checkKey('grantKey', cost.grantKey)
    if (typeof cost.currency !== 'string' || !CURRENCY.test(cost.currency)) {
      throw new StoreInputError('currency', 'three uppercase ASCII letters', cost.currency)
    }
    const attemptedUnits = cost.attemptedUnits ?? 0
    for (const [field, value] of [['units', cost.units], ['attemptedUnits', attemptedUnits]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) throw new StoreInputError(field, 'a non-negative integer', value)
    }
    await this.queue.enqueue({
      type: 'cost',
      cost: { capabilityId: cost.capabilityId, grantKey: cost.grantKey, units: cost.units, currency: cost.currency, attemptedUnits },
      at: this.#now(),
    })
  }

  /** Committed invocation and cost usage of one capability. */
  async usage(capabilityId: string): Promise<CapabilityUsage> {
    const grants = await this.db.all<GrantUsageRow>(
      `SELECT capability_id AS capabilityId, grant_key AS grantKey, used, max_invocations AS maxInvocations, updated_at AS updatedAt
       FROM invocation_budgets WHERE capability_id = ? ORDER BY grant_key`,
      [capabilityId],
    )
    const costs = await this.db.all<CostUsageRow>(
      `SELECT capability_id AS capabilityId, grant_key AS grantKey, currency, units, attempted_units AS attemptedUnits, updated_at AS updatedAt
       FROM cost_usage WHERE capability_id = ? ORDER BY grant_key, currency`,
      [capabilityId],
    )
    return { capabilityId, grants, costs }
  }

  /** Invocation usage of every grant, most recently used first (the operator report's budget rows). */
  async listGrants(limit = 50): Promise<GrantUsageRow[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreInputError('limit', 'a positive integer', limit)
    return this.db.all<GrantUsageRow>(
      `SELECT capability_id AS capabilityId, grant_key AS grantKey, used, max_invocations AS maxInvocations, updated_at AS updatedAt
       FROM invocation_budgets ORDER BY updated_at DESC, capability_id, grant_key LIMIT ?`,
      [limit],
    )
  }
}

// Nothing commits past its deadline: its sender has stopped waiting, or is about to (issue 41, fault 1).
// A batch holding a capture with a deadline is applied inside a savepoint; when one such capture ran out
// while the batch was applied, the savepoint is rolled back and the batch applied again with that capture
// refused. The window left is the COMMIT statement itself, as on PostgreSQL.
async function commitWrites(tx: SqliteExecutor, writes: readonly BudgetWrite[], clock: () => number): Promise<BudgetResult[]> {
  const bounded = writes.some(w => w.type === 'capture' && w.deadlineAt !== undefined)
  if (!bounded) return applyWrites(tx, writes, clock, new Set())
  const expired = new Set<number>()
  for (;;) {
    await tx.exec('SAVEPOINT budget_batch')
    const results = await applyWrites(tx, writes, clock, expired)
    const now = clock()
    const late = writes.flatMap((w, i) => (w.type === 'capture' && w.deadlineAt !== undefined && !(results[i] instanceof Error) && now > w.deadlineAt ? [i] : []))
    if (late.length === 0) {
      await tx.exec('RELEASE budget_batch')
      return results
    }
    await tx.exec('ROLLBACK TO budget_batch')
    await tx.exec('RELEASE budget_batch')
    for (const i of late) expired.add(i)
  }
}

// Applies the batch's writes in order; a capture listed in `expired` ran out before COMMIT once already.
async function applyWrites(tx: SqliteExecutor, writes: readonly BudgetWrite[], clock: () => number, expired: ReadonlySet<number>): Promise<BudgetResult[]> {
  const results: BudgetResult[] = []
  let tableReady = false
  const capturesTable = async () => {
    if (tableReady) return
    await tx.exec(CAPTURES_TABLE)
    await tx.exec('CREATE INDEX IF NOT EXISTS budget_captures_by_time ON budget_captures (created_at)')
    tableReady = true
  }
  for (const [index, write] of writes.entries()) {
    if (write.type === 'capture') {
      if (expired.has(index)) {
        results.push(new CaptureDeadlineError('before COMMIT'))
        continue
      }
      // its sender stops waiting at the deadline: a capture that reaches the write lock after it is not made
      if (write.deadlineAt !== undefined && clock() > write.deadlineAt) {
        results.push(new CaptureDeadlineError('it waited for the budget store'))
        continue
      }
      if (write.captureId === undefined) {
        results.push(await commitCapture(tx, write.plan, write.at))
        continue
      }
      await capturesTable()
      results.push(await commitCaptureById(tx, write.plan, write.at, write.captureId))
      continue
    }
    if (write.type === 'cancel') {
      await capturesTable()
      results.push(await commitCancel(tx, write.captureId, write.at))
      continue
    }
    if (write.type === 'cost') {
      const { cost } = write
      await tx.run(COST_SQL, [cost.capabilityId, cost.grantKey, cost.currency, cost.units, cost.attemptedUnits, write.at])
      results.push(undefined)
      continue
    }
    // A zero maximum is valid and denies every invocation (spec 03, aggregate invocation budget).
    const counted =
      write.maxInvocations > 0
        ? await tx.get<{ used: number }>(CONSUME_SQL, [write.capabilityId, write.grantKey, write.maxInvocations, write.at])
        : undefined
    if (counted !== undefined) {
      results.push({ allowed: true, used: counted.used })
    } else {
      const row = await tx.get<{ used: number }>(
        'SELECT used FROM invocation_budgets WHERE capability_id = ? AND grant_key = ?',
        [write.capabilityId, write.grantKey],
      )
      results.push({ allowed: false, used: row?.used ?? 0 })
    }
  }
  return results
}

// A capture under an id: a recorded capture answers its result, a cancelled id is refused, a new id is
// recorded with the capture's result when it is allowed (a refusal records nothing: it counted nothing).
async function commitCaptureById(tx: SqliteExecutor, plan: CapturePlan, at: number, captureId: string): Promise<CaptureResult | Error> {
  await tx.run('DELETE FROM budget_captures WHERE created_at < ?', [at - CAPTURE_ID_RETENTION_SECONDS])
  const row = await tx.get<{ state: string; result: string | null }>('SELECT state, result FROM budget_captures WHERE capture_id = ?', [captureId])
  if (row !== undefined) return row.state === 'captured' && row.result !== null ? (JSON.parse(row.result) as CaptureResult) : new CaptureCancelledError(captureId)
  const result = await commitCapture(tx, plan, at)
  if (result.allowed) {
    await tx.run("INSERT INTO budget_captures (capture_id, state, plan, result, created_at) VALUES (?, 'captured', ?, ?, ?)", [captureId, JSON.stringify(plan), JSON.stringify(result), at])
  }
  return result
}

// Gives a recorded capture's counters and costs back, or records the id cancelled before any capture.
async function commitCancel(tx: SqliteExecutor, captureId: string, at: number): Promise<CaptureCancelResult> {
  const row = await tx.get<{ state: string; plan: string | null }>('SELECT state, plan FROM budget_captures WHERE capture_id = ?', [captureId])
  if (row === undefined) {
    await tx.run("INSERT INTO budget_captures (capture_id, state, created_at) VALUES (?, 'cancelled', ?)", [captureId, at])
    return { captureId, reversed: false }
  }
  if (row.state === 'cancelled' || row.plan === null) return { captureId, reversed: false }
  const plan = JSON.parse(row.plan) as CapturePlan
  for (const c of plan.invocations) {
    await tx.run('UPDATE invocation_budgets SET used = max(used - 1, 0), updated_at = ? WHERE capability_id = ? AND grant_key = ?', [at, c.owner, c.key])
  }
  for (const cost of plan.costs) {
    await tx.run('UPDATE cost_usage SET units = max(units - ?, 0), updated_at = ? WHERE capability_id = ? AND grant_key = ? AND currency = ?', [cost.units, at, cost.owner, cost.key, cost.currency])
  }
  await tx.run("UPDATE budget_captures SET state = 'cancelled' WHERE capture_id = ?", [captureId])
  return { captureId, reversed: true }
}

// Reads, then writes, inside the batch's write transaction: nothing else writes in between.
async function commitCapture(tx: SqliteExecutor, plan: CapturePlan, at: number): Promise<CaptureResult> {
  const used: number[] = []
  for (const [index, c] of plan.invocations.entries()) {
    const row = await tx.get<{ used: number; max: number }>(
      'SELECT used, max_invocations AS max FROM invocation_budgets WHERE capability_id = ? AND grant_key = ?',
      [c.owner, c.key],
    )
    // spec 03: every member of a delegation family carries the root's maximum; another one is refused
    if (c.fixedMax && row !== undefined && row.max !== c.max) return { allowed: false, failed: { kind: 'max_mismatch', index, recordedMax: row.max } }
    // a zero maximum is valid and denies every capture (spec 03)
    if ((row?.used ?? 0) >= c.max) return { allowed: false, failed: { kind: 'invocation', index, used: row?.used ?? 0 } }
    used.push((row?.used ?? 0) + 1)
  }
  const costUnits: number[] = []
  for (const [index, cost] of plan.costs.entries()) {
    const row = await tx.get<{ units: number }>('SELECT units FROM cost_usage WHERE capability_id = ? AND grant_key = ? AND currency = ?', [cost.owner, cost.key, cost.currency])
    const charged = row?.units ?? 0
    if (charged + cost.units > cost.maxUnits) return { allowed: false, failed: { kind: 'cost', index, units: charged } }
    costUnits.push(charged + cost.units)
  }
  for (const c of plan.invocations) await tx.get(CONSUME_SQL, [c.owner, c.key, c.max, at])
  for (const cost of plan.costs) await tx.run(COST_SQL, [cost.owner, cost.key, cost.currency, cost.units, 0, at])
  return { allowed: true, used, costUnits }
}

function checkKey(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new StoreInputError(field, 'a non-empty string', value)
}
