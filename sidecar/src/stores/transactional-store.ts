// What the stores whose every write goes through one transactional group commit share (budgets,
// nonces): the file, the queue, health, flush and an idempotent close. Reads go to `db` directly.
import { transactionalGroupCommit, type GroupCommit } from './group-commit.js'
import type { SqliteDatabase, SqliteExecutor } from './sqlite-driver.js'

export abstract class TransactionalStore<W, R> {
  protected readonly db: SqliteDatabase
  protected readonly queue: GroupCommit<W, R>
  #closing: Promise<void> | undefined

  /** `store` and `noun` name the store and one write in commit errors ("budgets", "budget update"). */
  constructor(
    db: SqliteDatabase,
    store: string,
    noun: string,
    commitWrites: (tx: SqliteExecutor, writes: readonly W[]) => Promise<R[]>,
    maxBatchSize?: number,
  ) {
    this.db = db
    this.queue = transactionalGroupCommit(db, store, noun, commitWrites, maxBatchSize)
  }

  get path(): string {
    return this.db.path
  }

  get isEphemeral(): boolean {
    return this.db.isEphemeral
  }

  /** False after a failed commit until a later one succeeds. */
  get healthy(): boolean {
    return this.queue.healthy
  }

  /** Resolves when every update queued so far is committed (or failed). */
  flush(): Promise<void> {
    return this.queue.flush()
  }

  /** Flushes, then closes the file; later updates reject. */
  close(): Promise<void> {
    this.#closing ??= this.queue.close().then(() => this.db.close())
    return this.#closing
  }
}
