// The SQLite stores' group commit (transactionalGroupCommit over @gate/trust's GroupCommit) on a real
// file: an item resolves only once another connection can read its row, and a batch is one transaction,
// rolled back whole when any of its writes fails.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { openDatabase, type SqliteDatabase } from './sqlite-driver.js'
import { transactionalGroupCommit } from './transactional-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

// Items are strings inserted into a table whose CHECK refuses 'boom': a real commit failure on demand.
async function setup(t: Test): Promise<{ writer: SqliteDatabase; reader: SqliteDatabase }> {
  const path = join(t.testdir(), 'queue.db')
  const writer = await openDatabase(path, { driver })
  await writer.exec("CREATE TABLE items (seq INTEGER PRIMARY KEY, value TEXT NOT NULL CHECK (value <> 'boom'))")
  const reader = await openDatabase(path, { driver })
  t.teardown(async () => {
    await reader.close()
    await writer.close()
  })
  return { writer, reader }
}

function insertAll(writer: SqliteDatabase) {
  return transactionalGroupCommit(writer, 'budgets', 'budget update', async (tx, items: readonly string[]) => {
    const seqs: number[] = []
    for (const value of items) seqs.push((await tx.run('INSERT INTO items (value) VALUES (?)', [value])).lastInsertRowid)
    return seqs
  })
}

async function countRows(db: SqliteDatabase): Promise<number> {
  return (await db.get<{ n: number }>('SELECT count(*) AS n FROM items'))!.n
}

t.test('an item resolves only once its row is committed (another connection sees it)', async t => {
  const { writer, reader } = await setup(t)
  const queue = insertAll(writer)
  t.teardown(() => queue.close())
  const seen = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const seq = await queue.enqueue(`v${i}`)
      return (await reader.get<{ value: string }>('SELECT value FROM items WHERE seq = ?', [seq]))?.value
    }),
  )
  t.same(seen, Array.from({ length: 20 }, (_, i) => `v${i}`))
})

t.test('one transaction per batch; a failed batch rolls back whole and names the store', async t => {
  const { writer, reader } = await setup(t)
  const queue = insertAll(writer)
  t.teardown(() => queue.close())
  t.same(await Promise.all(['a', 'b'].map(v => queue.enqueue(v))), [1, 2])
  // 'ok' and 'boom' share a batch: the CHECK failure takes 'ok' down with it
  const results = await Promise.allSettled(['ok', 'boom'].map(v => queue.enqueue(v)))
  for (const r of results) {
    t.equal(r.status, 'rejected')
    if (r.status === 'rejected') {
      t.match(r.reason, { name: 'StoreFailedError', code: 'gate_store_failed', store: 'budgets', path: writer.path, message: /the commit of 2 budget update\(s\) failed/ })
    }
  }
  t.equal(await countRows(reader), 2, 'nothing of the failed batch was kept')
})
