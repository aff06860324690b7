// What a SQLite driver provides (node-sqlite-driver.ts, sqlite3-driver.ts), apart from `openDatabase`
// (sqlite-driver.ts), which picks one: the drivers import these types from here, not from the module
// that loads them.

/** A value SQLite can bind or return (INTEGER, REAL, TEXT, BLOB, NULL). */
export type SqlValue = string | number | null | Uint8Array

/** Positional parameters for `?` placeholders. */
export type SqlParams = readonly SqlValue[]

/** What a data-changing statement reports. */
export interface RunResult {
  changes: number
  lastInsertRowid: number
}

/** The raw driver surface: no ordering or transaction guarantees of its own. */
export interface SqliteConnection {
  exec(sql: string): Promise<void>
  run(sql: string, params: SqlParams): Promise<RunResult>
  get<T>(sql: string, params: SqlParams): Promise<T | undefined>
  all<T>(sql: string, params: SqlParams): Promise<T[]>
  close(): Promise<void>
}
