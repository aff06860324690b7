// Altering a store file behind Gate's back, as an attacker with write access to it would: statements run
// with the sqlite3 package directly, bypassing every store API (tests of what verification catches).
import type * as Sqlite3 from 'sqlite3'

/** Runs `statements` on the SQLite file at `path`, in order, then closes it. */
export async function runSqlStatements(path: string, statements: readonly string[]): Promise<void> {
  const sqlite3 = ((await import('sqlite3')) as unknown as { default: typeof Sqlite3 }).default
  const db = await new Promise<Sqlite3.Database>((resolve, reject) => {
    const opened: Sqlite3.Database = new sqlite3.Database(path, err => (err ? reject(err) : resolve(opened)))
  })
  try {
    // a live `gate` process may hold the write lock for a moment: wait for it rather than fail
    db.configure('busyTimeout', 30_000)
    for (const statement of statements) await new Promise<void>((resolve, reject) => db.exec(statement, err => (err ? reject(err) : resolve())))
  } finally {
    await new Promise<void>(resolve => db.close(() => resolve()))
  }
}
