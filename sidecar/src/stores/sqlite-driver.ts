// The one SQLite connection interface every store uses, and `openDatabase`, which picks a driver and
// applies the durability pragmas. Two drivers sit behind `SqliteConnection`: node:sqlite (Node 22.5+,
// synchronous, in-process) and the npm `sqlite3` addon (libuv thread pool). `SqliteDatabase` adds what
// both need on top: one statement at a time in call order, and transactions nothing else interleaves with.
import { InvalidConfigError, isGateError } from '@gate/sdk'
import { StoreFailedError } from '../errors.js'
import { isInMemoryPath } from './store-paths.js'
import type { RunResult, SqlParams, SqliteConnection } from './sqlite-connection.js'
import { createPrivateFile, restrictFileMode } from './file-mode.js'

export type { RunResult, SqlParams, SqliteConnection, SqlValue } from './sqlite-connection.js'

/** One statement of a batch. */
export interface SqlStatement {
  sql: string
  params?: SqlParams
}

export type SqliteDriverName = 'sqlite3' | 'node:sqlite'

/**
 * `synchronous` pragma in WAL mode. NORMAL: a commit survives the process being killed (`kill -9`), the
 * WAL is fsynced only at checkpoints, so power loss or an OS crash can drop the last commits. FULL: the WAL
 * is fsynced at every commit, durable against power loss too, at the cost of one fsync per group commit.
 */
export type SynchronousMode = 'NORMAL' | 'FULL'

/** Statements a connection can run; inside `transaction()` this is the transaction's own handle. */
export interface SqliteExecutor {
  exec(sql: string): Promise<void>
  run(sql: string, params?: SqlParams): Promise<RunResult>
  get<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T | undefined>
  all<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>
  /** Runs the statements in order (no transaction of its own) and returns one result per statement. */
  runEach(statements: readonly SqlStatement[]): Promise<RunResult[]>
}

/** One open SQLite connection: statements run one at a time, in call order. */
export interface SqliteDatabase extends SqliteExecutor {
  readonly path: string
  readonly driver: SqliteDriverName
  /** True for `:memory:` (and the other in-memory forms): nothing survives `close()`. */
  readonly isEphemeral: boolean
  /** Runs the statements in one IMMEDIATE transaction: all commit or none do. */
  batch(statements: readonly SqlStatement[]): Promise<RunResult[]>
  /** Runs `fn` in one IMMEDIATE transaction that no other statement on this connection interleaves with; rolls back when it throws. */
  transaction<R>(fn: (tx: SqliteExecutor) => Promise<R>): Promise<R>
  /**
   * Runs `sql` (statements without parameters) as one IMMEDIATE transaction in a single call into
   * SQLite, so the write lock is never held while a statement waits for the event loop (a second
   * connection to a file the receipt writer commits to); rolls back and rejects when one fails.
   */
  transactionScript(sql: string): Promise<void>
  close(): Promise<void>
}

/** Options of `openDatabase`. */
export interface DatabaseOptions {
  /** Which driver: `auto` (default) takes node:sqlite when the runtime has it, else sqlite3. */
  driver?: 'auto' | SqliteDriverName
  /** Default `NORMAL` (durable against process kill); `FULL` for power-loss durability. */
  synchronous?: SynchronousMode
  /** How long a statement waits for another process's lock, default 5000 ms. */
  busyTimeoutMs?: number
  /**
   * WAL pages between automatic checkpoints, default 4000 (~16 MB of WAL). Each checkpoint fsyncs; on this
   * machine 1000 (SQLite's default), 4000 and 16000 measured within noise of each other.
   */
  walAutocheckpointPages?: number
}

/** Defaults of `DatabaseOptions`. */
export const DATABASE_DEFAULTS = Object.freeze({
  driver: 'auto',
  synchronous: 'NORMAL',
  busyTimeoutMs: 5000,
  walAutocheckpointPages: 4000,
} as const satisfies Required<DatabaseOptions>)

/** Fully resolved `DatabaseOptions`. */
export type ResolvedDatabaseOptions = {
  readonly [K in keyof DatabaseOptions]-?: Exclude<DatabaseOptions[K], undefined>
}

const DATABASE_OPTION_KEYS: readonly string[] = Object.keys(DATABASE_DEFAULTS)

/** Validates database options (unknown keys refused) and merges the defaults once. */
export function resolveDatabaseOptions(input: DatabaseOptions | undefined, optionName = 'options'): ResolvedDatabaseOptions {
  const options = input ?? {}
  if (typeof options !== 'object' || options === null) throw new InvalidConfigError(optionName, 'an object', options)
  for (const key of Object.keys(options)) {
    if (!DATABASE_OPTION_KEYS.includes(key)) {
      throw new InvalidConfigError(`${optionName}.${key}`, `one of ${DATABASE_OPTION_KEYS.join(', ')} (unknown option)`, key)
    }
  }
  const resolved = { ...DATABASE_DEFAULTS, ...stripUndefined(options) }
  if (!['auto', 'sqlite3', 'node:sqlite'].includes(resolved.driver)) {
    throw new InvalidConfigError(`${optionName}.driver`, '"auto", "sqlite3" or "node:sqlite"', resolved.driver)
  }
  if (resolved.synchronous !== 'NORMAL' && resolved.synchronous !== 'FULL') {
    throw new InvalidConfigError(`${optionName}.synchronous`, '"NORMAL" or "FULL"', resolved.synchronous)
  }
  if (!Number.isSafeInteger(resolved.busyTimeoutMs) || resolved.busyTimeoutMs < 0) {
    throw new InvalidConfigError(`${optionName}.busyTimeoutMs`, 'a non-negative integer', resolved.busyTimeoutMs)
  }
  if (!Number.isSafeInteger(resolved.walAutocheckpointPages) || resolved.walAutocheckpointPages < 1) {
    throw new InvalidConfigError(`${optionName}.walAutocheckpointPages`, 'a positive integer', resolved.walAutocheckpointPages)
  }
  return Object.freeze(resolved)
}

/** Hooks of `openDatabase` beyond the options. */
export interface OpenHooks {
  /** Store name used in error messages, default "sqlite". */
  store?: string
  /**
   * Runs after the connection opened and before any pragma that writes to the file (journal_mode), so a
   * foreign file is refused untouched. Throw to refuse; the connection is closed for you.
   */
  inspect?: (db: SqliteDatabase) => Promise<void>
}

/** True when this runtime has node:sqlite (Node 22.5+; without a flag from 22.13 / 23.4). */
export async function isNodeSqliteAvailable(): Promise<boolean> {
  const { loadNodeSqlite } = await import('./node-sqlite-driver.js')
  return loadNodeSqlite() !== undefined
}

/** Opens `path` (a file, or `:memory:` / empty for an ephemeral database) with WAL, the chosen `synchronous` and a busy timeout. */
export async function openDatabase(path: string, options?: DatabaseOptions, hooks?: OpenHooks): Promise<SqliteDatabase> {
  const resolved = resolveDatabaseOptions(options)
  const store = hooks?.store ?? 'sqlite'
  const ephemeral = isInMemoryPath(path)
  const driver = await chooseDriver(resolved.driver, store, path)
  // 0600 from the first byte (file-mode.ts): the file exists before SQLite opens it
  if (!ephemeral) createPrivateFile(path, store)
  let connection: SqliteConnection
  try {
    connection =
      driver === 'node:sqlite'
        ? (await import('./node-sqlite-driver.js')).openNodeSqliteConnection(path, resolved.busyTimeoutMs)
        : await (await import('./sqlite3-driver.js')).openSqlite3Connection(path)
  } catch (err) {
    throw new StoreFailedError(store, path, `cannot open (${errorText(err)})`, err)
  }
  const db = new SerializedDatabase(connection, { path, driver, isEphemeral: ephemeral, store })
  try {
    await db.exec(`PRAGMA busy_timeout = ${resolved.busyTimeoutMs}`)
    if (hooks?.inspect !== undefined) await hooks.inspect(db)
    // once the file proved to be ours (a foreign one was refused above, its mode untouched)
    if (!ephemeral) restrictFileMode(path, store)
    if (!ephemeral) {
      const mode = await db.get<{ journal_mode: string }>('PRAGMA journal_mode = WAL')
      if (mode?.journal_mode?.toLowerCase() !== 'wal') {
        throw new StoreFailedError(store, path, `cannot switch to WAL journal mode (got ${mode?.journal_mode ?? 'nothing'})`)
      }
      await db.exec(`PRAGMA wal_autocheckpoint = ${resolved.walAutocheckpointPages}`)
    }
    await db.exec(`PRAGMA synchronous = ${resolved.synchronous}`)
    // Simple schemas without foreign keys: nothing to enforce, and enforcement costs every insert.
    await db.exec('PRAGMA foreign_keys = OFF')
  } catch (err) {
    await db.close().catch(() => undefined)
    if (isGateError(err)) throw err
    throw new StoreFailedError(store, path, `cannot configure (${errorText(err)})`, err)
  }
  return db
}

async function chooseDriver(requested: 'auto' | SqliteDriverName, store: string, path: string): Promise<SqliteDriverName> {
  if (requested === 'sqlite3') return 'sqlite3'
  const available = await isNodeSqliteAvailable()
  if (requested === 'node:sqlite' && !available) {
    throw new StoreFailedError(store, path, `driver "node:sqlite" is not available in Node ${process.versions.node} (needs 22.5 or later)`)
  }
  return available ? 'node:sqlite' : 'sqlite3'
}

/** True for SQLite's "file is not a database" (SQLITE_NOTADB, 26) from either driver. */
export function isNotADatabaseError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { code?: unknown; errcode?: unknown; errno?: unknown; message?: unknown }
  return (
    e.code === 'SQLITE_NOTADB' ||
    e.errcode === 26 ||
    (typeof e.message === 'string' && e.message.includes('file is not a database'))
  )
}

/** The driver error's message, for a GateError's text (the error itself stays as `cause`). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

/**
 * Wraps a raw connection so operations run strictly one after another in call order. A transaction holds
 * the connection for its whole duration: statements issued by other callers meanwhile wait, so they can
 * neither land inside it nor read its uncommitted rows.
 */
class SerializedDatabase implements SqliteDatabase {
  readonly path: string
  readonly driver: SqliteDriverName
  readonly isEphemeral: boolean
  readonly #connection: SqliteConnection
  readonly #store: string
  #tail: Promise<unknown> = Promise.resolve()
  #closed = false

  constructor(connection: SqliteConnection, about: { path: string; driver: SqliteDriverName; isEphemeral: boolean; store: string }) {
    this.#connection = connection
    this.path = about.path
    this.driver = about.driver
    this.isEphemeral = about.isEphemeral
    this.#store = about.store
  }

  exec(sql: string): Promise<void> {
    return this.#enqueue(() => this.#connection.exec(sql))
  }

  run(sql: string, params: SqlParams = []): Promise<RunResult> {
    return this.#enqueue(() => this.#connection.run(sql, params))
  }

  get<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T | undefined> {
    return this.#enqueue(() => this.#connection.get<T>(sql, params))
  }

  all<T = Record<string, unknown>>(sql: string, params: SqlParams = []): Promise<T[]> {
    return this.#enqueue(() => this.#connection.all<T>(sql, params))
  }

  runEach(statements: readonly SqlStatement[]): Promise<RunResult[]> {
    return this.#enqueue(() => runSequentially(this.#connection, statements))
  }

  batch(statements: readonly SqlStatement[]): Promise<RunResult[]> {
    return this.transaction(tx => tx.runEach(statements))
  }

  transaction<R>(fn: (tx: SqliteExecutor) => Promise<R>): Promise<R> {
    return this.#enqueue(async () => {
      const connection = this.#connection
      await connection.exec('BEGIN IMMEDIATE')
      let result: R
      try {
        result = await fn(createExecutor(connection))
      } catch (err) {
        // A failed COMMIT or statement may already have ended the transaction; ROLLBACK then fails harmlessly.
        await connection.exec('ROLLBACK').catch(() => undefined)
        throw err
      }
      try {
        await connection.exec('COMMIT')
      } catch (err) {
        await connection.exec('ROLLBACK').catch(() => undefined)
        throw err
      }
      return result
    })
  }

  transactionScript(sql: string): Promise<void> {
    return this.#enqueue(async () => {
      try {
        await this.#connection.exec(`BEGIN IMMEDIATE;\n${sql}\nCOMMIT;`)
      } catch (err) {
        // the failed statement left the transaction open (or COMMIT failed): end it
        await this.#connection.exec('ROLLBACK').catch(() => undefined)
        throw err
      }
    })
  }

  close(): Promise<void> {
    if (this.#closed) return this.#tail.then(() => undefined, () => undefined)
    this.#closed = true
    const closing = this.#tail.then(
      () => this.#connection.close(),
      () => this.#connection.close(),
    )
    this.#tail = closing.catch(() => undefined)
    return closing
  }

  #enqueue<R>(operation: () => Promise<R>): Promise<R> {
    if (this.#closed) return Promise.reject(new StoreFailedError(this.#store, this.path, 'the database connection is closed'))
    const result = this.#tail.then(operation, operation)
    this.#tail = result.catch(() => undefined)
    return result
  }
}

function createExecutor(connection: SqliteConnection): SqliteExecutor {
  return {
    exec: sql => connection.exec(sql),
    run: (sql, params = []) => connection.run(sql, params),
    get: <T>(sql: string, params: SqlParams = []) => connection.get<T>(sql, params),
    all: <T>(sql: string, params: SqlParams = []) => connection.all<T>(sql, params),
    runEach: statements => runSequentially(connection, statements),
  }
}

// Awaited one by one: the sqlite3 addon may reorder statements issued together on different prepared
// statements, and a batch's order is its rowid (seq) order.
async function runSequentially(connection: SqliteConnection, statements: readonly SqlStatement[]): Promise<RunResult[]> {
  const results: RunResult[] = []
  for (const statement of statements) results.push(await connection.run(statement.sql, statement.params ?? []))
  return results
}
