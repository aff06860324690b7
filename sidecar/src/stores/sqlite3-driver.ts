// `SqliteConnection` over the npm `sqlite3` addon. Statements run on the libuv thread pool, so SQLite's
// work (B-tree, WAL writes) stays off the event loop. Prepared statements are cached by SQL text: group
// commit and the query planner's shapes reuse a handful of statements, which then skip SQL parsing and
// planning on every call after the first.
import type * as Sqlite3 from 'sqlite3'
import type { RunResult, SqlParams, SqliteConnection, SqlValue } from './sqlite-connection.js'
import { isInMemoryPath } from './store-paths.js'

type Sqlite3Module = typeof Sqlite3

const STATEMENT_CACHE_SIZE = 128

let loaded: Promise<Sqlite3Module> | undefined

function loadSqlite3(): Promise<Sqlite3Module> {
  // A CommonJS addon: its exports arrive as the namespace's `default`.
  loaded ??= import('sqlite3').then(mod => (mod as unknown as { default: Sqlite3Module }).default)
  return loaded
}

/** Opens a connection with the sqlite3 addon; in-memory paths open a private `:memory:` database. */
export async function openSqlite3Connection(path: string): Promise<SqliteConnection> {
  const sqlite3 = await loadSqlite3()
  const filename = isInMemoryPath(path) ? ':memory:' : path
  const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
    const opened: Sqlite3.Database = new sqlite3.Database(filename, err => (err ? reject(err) : resolve(opened)))
  })
  return new Sqlite3Connection(db)
}

class Sqlite3Connection implements SqliteConnection {
  readonly #db: Sqlite3.Database
  readonly #statements = new Map<string, Promise<Sqlite3.Statement>>()

  constructor(db: Sqlite3.Database) {
    this.#db = db
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.#db.exec(sql, err => (err ? reject(err) : resolve())))
  }

  async run(sql: string, params: SqlParams): Promise<RunResult> {
    const statement = await this.#prepare(sql)
    return new Promise((resolve, reject) => {
      statement.run(toBindable(params), function (this: Sqlite3.RunResult, err: Error | null) {
        if (err) reject(err)
        else resolve({ changes: this.changes, lastInsertRowid: this.lastID })
      })
    })
  }

  async get<T>(sql: string, params: SqlParams): Promise<T | undefined> {
    const statement = await this.#prepare(sql)
    const row = await new Promise<T | undefined>((resolve, reject) => {
      statement.get<T>(toBindable(params), (err: Error | null, found?: T) => (err ? reject(err) : resolve(found)))
    })
    // get() leaves the statement mid-step: reset it, or it keeps its read snapshot (and blocks COMMIT
    // when the statement wrote, as UPDATE … RETURNING does).
    await new Promise<void>(resolve => statement.reset(() => resolve()))
    return row
  }

  async all<T>(sql: string, params: SqlParams): Promise<T[]> {
    const statement = await this.#prepare(sql)
    return new Promise((resolve, reject) => {
      statement.all<T>(toBindable(params), (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows)))
    })
  }

  async close(): Promise<void> {
    const statements = [...this.#statements.values()]
    this.#statements.clear()
    for (const pending of statements) {
      const statement = await pending.catch(() => undefined)
      if (statement !== undefined) await new Promise<void>(resolve => statement.finalize(() => resolve()))
    }
    await new Promise<void>((resolve, reject) => this.#db.close(err => (err ? reject(err) : resolve())))
  }

  #prepare(sql: string): Promise<Sqlite3.Statement> {
    const cached = this.#statements.get(sql)
    if (cached !== undefined) {
      // Map order is insertion order: re-insert to keep the most recently used last.
      this.#statements.delete(sql)
      this.#statements.set(sql, cached)
      return cached
    }
    const prepared = new Promise<Sqlite3.Statement>((resolve, reject) => {
      const statement: Sqlite3.Statement = this.#db.prepare(sql, err => (err ? reject(err) : resolve(statement)))
    })
    prepared.catch(() => this.#statements.delete(sql))
    this.#statements.set(sql, prepared)
    if (this.#statements.size > STATEMENT_CACHE_SIZE) {
      const [oldestSql, oldest] = this.#statements.entries().next().value as [string, Promise<Sqlite3.Statement>]
      this.#statements.delete(oldestSql)
      oldest.then(statement => statement.finalize(), () => undefined)
    }
    return prepared
  }
}

// The addon binds Buffers as BLOBs but not plain Uint8Arrays.
function toBindable(params: SqlParams): unknown[] {
  return params.map((value: SqlValue) =>
    value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value,
  )
}
