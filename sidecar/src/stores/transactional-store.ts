// What the stores whose every write goes through one transactional group commit share (budgets,
// nonces): the file, the queue, health, flush and an idempotent close. Reads go to `db` directly.
import { GroupCommit, StoreFailedError } from '@gate/trust'
import { errorText, type SqliteDatabase, type SqliteExecutor } from './sqlite-driver.js'

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

/**
 * A group commit whose every batch is one transaction of `db`; a failed batch rejects each of its items
 * with StoreFailedError naming the store, its file and `noun` (what one item is: "budget update").
 */
export function transactionalGroupCommit<T, R>(
  db: SqliteDatabase,
  store: string,
  noun: string,
  commitWrites: (tx: SqliteExecutor, items: readonly T[]) => Promise<R[]>,
  maxBatchSize?: number,
): GroupCommit<T, R> {
  return new GroupCommit<T, R>({
    store,
    maxBatchSize,
    commitBatch: items => db.transaction(tx => commitWrites(tx, items)),
    toError: (cause, batchSize) => new StoreFailedError(store, db.path, `the commit of ${batchSize} ${noun}(s) failed (${errorText(cause)})`, cause),
  })
}
