// `SqliteConnection` over node:sqlite's `DatabaseSync` (Node 22.5+). The module is looked up with
// `process.getBuiltinModule`, never imported statically, so this file loads on Node 20 too and the
// driver simply reports itself unavailable. Statements run synchronously on the event loop; a group
// commit of a few hundred rows takes about a millisecond.
import type { RunResult, SqlParams, SqliteConnection } from './sqlite-connection.js'
import { isInMemoryPath } from './store-paths.js'

interface NodeSqliteStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint }
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
}

interface NodeSqliteDatabase {
  exec(sql: string): void
  prepare(sql: string): NodeSqliteStatement
  close(): void
}

/** The part of node:sqlite this driver uses (Node's own types are not in @types/node 20). */
export interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { timeout?: number }) => NodeSqliteDatabase
}

const STATEMENT_CACHE_SIZE = 128

/** node:sqlite when this runtime has it, else undefined (Node 20, or 22.5–22.12 without --experimental-sqlite). */
export function loadNodeSqlite(): NodeSqliteModule | undefined {
  try {
    const mod = process.getBuiltinModule?.('node:sqlite') as NodeSqliteModule | undefined
    return typeof mod?.DatabaseSync === 'function' ? mod : undefined
  } catch {
    return undefined
  }
}

/** Opens a connection with node:sqlite; in-memory paths open a private `:memory:` database. */
export function openNodeSqliteConnection(path: string, busyTimeoutMs: number): SqliteConnection {
  const sqlite = loadNodeSqlite()
  if (sqlite === undefined) throw new Error(`node:sqlite is not available in Node ${process.versions.node}`)
  return new NodeSqliteConnection(new sqlite.DatabaseSync(isInMemoryPath(path) ? ':memory:' : path, { timeout: busyTimeoutMs }))
}

// Each method is async only to share the interface: the work is done before the promise is returned,
// and a thrown SQLite error becomes a rejection.
class NodeSqliteConnection implements SqliteConnection {
  readonly #db: NodeSqliteDatabase
  readonly #statements = new Map<string, NodeSqliteStatement>()

  constructor(db: NodeSqliteDatabase) {
    this.#db = db
  }

  async exec(sql: string): Promise<void> {
    this.#db.exec(sql)
  }

  async run(sql: string, params: SqlParams): Promise<RunResult> {
    const result = this.#prepare(sql).run(...params)
    return { changes: Number(result.changes), lastInsertRowid: Number(result.lastInsertRowid) }
  }

  async get<T>(sql: string, params: SqlParams): Promise<T | undefined> {
    return this.#prepare(sql).get(...params) as T | undefined
  }

  async all<T>(sql: string, params: SqlParams): Promise<T[]> {
    return this.#prepare(sql).all(...params) as T[]
  }

  async close(): Promise<void> {
    this.#statements.clear()
    this.#db.close()
  }

  #prepare(sql: string): NodeSqliteStatement {
    let statement = this.#statements.get(sql)
    if (statement !== undefined) {
      this.#statements.delete(sql)
    } else {
      statement = this.#db.prepare(sql)
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value as string)
      }
    }
    this.#statements.set(sql, statement)
    return statement
  }
}
