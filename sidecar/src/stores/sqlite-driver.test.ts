// The driver layer against real files. Runs with sqlite3 (GATE_STORE_DRIVER=node:sqlite when the
// node:sqlite re-run in node-sqlite-driver.test.ts spawns it under Node 24).
import t, { type Test } from 'tap'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isNodeSqliteAvailable, openDatabase, resolveDatabaseOptions, type SqliteDatabase } from './sqlite-driver.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

async function open(t: Test, path: string, options: Parameters<typeof openDatabase>[1] = {}): Promise<SqliteDatabase> {
  const db = await openDatabase(path, { driver, ...options })
  t.teardown(() => db.close().catch(() => undefined))
  return db
}

t.test(`a file opens in WAL mode with synchronous NORMAL and a busy timeout (${driver})`, async t => {
  const db = await open(t, join(t.testdir(), 'a.db'))
  t.equal(db.driver, driver)
  t.equal(db.isEphemeral, false)
  t.same(await db.get('PRAGMA journal_mode'), { journal_mode: 'wal' })
  t.same(await db.get('PRAGMA synchronous'), { synchronous: 1 }, 'NORMAL is 1')
  t.same(await db.get('PRAGMA busy_timeout'), { timeout: 5000 })
  t.same(await db.get('PRAGMA foreign_keys'), { foreign_keys: 0 })
})

t.test('synchronous FULL is an option (power-loss durability)', async t => {
  const db = await open(t, join(t.testdir(), 'a.db'), { synchronous: 'FULL', busyTimeoutMs: 250 })
  t.same(await db.get('PRAGMA synchronous'), { synchronous: 2 }, 'FULL is 2')
  t.same(await db.get('PRAGMA busy_timeout'), { timeout: 250 })
})

t.test(':memory: and the empty path are ephemeral', async t => {
  for (const path of [':memory:', '', 'file::memory:?cache=shared']) {
    const db = await open(t, path)
    t.equal(db.isEphemeral, true, JSON.stringify(path))
    await db.exec('CREATE TABLE x (a)')
    t.same((await db.run('INSERT INTO x VALUES (?)', [1])).changes, 1)
  }
})

t.test('run reports changes and lastInsertRowid; get and all read rows; blobs round-trip', async t => {
  const db = await open(t, join(t.testdir(), 'a.db'))
  await db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, data BLOB)')
  t.same(await db.run('INSERT INTO items (name, data) VALUES (?, ?)', ['one', new Uint8Array([1, 2, 3])]), { changes: 1, lastInsertRowid: 1 })
  t.same(await db.run('INSERT INTO items (name) VALUES (?)', ['two']), { changes: 1, lastInsertRowid: 2 })
  const row = await db.get<{ name: string; data: Uint8Array }>('SELECT name, data FROM items WHERE id = ?', [1])
  t.equal(row?.name, 'one')
  t.same([...(row?.data ?? [])], [1, 2, 3])
  t.equal(await db.get('SELECT * FROM items WHERE id = ?', [99]), undefined)
  t.same((await db.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map(r => r.name), ['one', 'two'])
  t.same(await db.run('UPDATE items SET name = ?', ['x']), { changes: 2, lastInsertRowid: 2 })
})

t.test('UPDATE … RETURNING through get leaves no statement open, so the next COMMIT succeeds', async t => {
  const db = await open(t, join(t.testdir(), 'a.db'))
  await db.exec('CREATE TABLE c (k TEXT PRIMARY KEY, n INTEGER)')
  await db.run("INSERT INTO c VALUES ('a', 0)")
  const n = await db.transaction(async tx => (await tx.get<{ n: number }>("UPDATE c SET n = n + 1 WHERE k = 'a' RETURNING n"))?.n)
  t.equal(n, 1)
  t.same(await db.get("SELECT n FROM c WHERE k = 'a'"), { n: 1 })
})

t.test('batch commits every statement in one transaction, or none when one fails', async t => {
  const db = await open(t, join(t.testdir(), 'a.db'))
  await db.exec('CREATE TABLE u (v TEXT UNIQUE)')
  const results = await db.batch([
    { sql: 'INSERT INTO u VALUES (?)', params: ['a'] },
    { sql: 'INSERT INTO u VALUES (?)', params: ['b'] },
  ])
  t.same(results.map(r => r.changes), [1, 1])
  await t.rejects(
    db.batch([
      { sql: 'INSERT INTO u VALUES (?)', params: ['c'] },
      { sql: 'INSERT INTO u VALUES (?)', params: ['a'] },
    ]),
    /UNIQUE/,
  )
  t.same((await db.all<{ v: string }>('SELECT v FROM u ORDER BY v')).map(r => r.v), ['a', 'b'], 'c was rolled back')
})

t.test('a transaction holds the connection: statements issued meanwhile run after it and never see its rows', async t => {
  const db = await open(t, join(t.testdir(), 'a.db'))
  await db.exec('CREATE TABLE x (a INTEGER)')
  let release!: () => void
  const gate = new Promise<void>(resolve => (release = resolve))
  const tx = db.transaction(async tx => {
    await tx.run('INSERT INTO x VALUES (1)')
    await gate
    throw new Error('roll back')
  })
  const read = db.get<{ n: number }>('SELECT count(*) AS n FROM x')
  release()
  await t.rejects(tx, /roll back/)
  t.same(await read, { n: 0 }, 'the read waited for the rollback')
})

t.test('a second connection sees only committed rows (WAL readers)', async t => {
  const path = join(t.testdir(), 'a.db')
  const writer = await open(t, path)
  await writer.exec('CREATE TABLE x (a INTEGER)')
  const reader = await open(t, path)
  await writer.run('INSERT INTO x VALUES (1)')
  t.same(await reader.get('SELECT count(*) AS n FROM x'), { n: 1 })
})

t.test('a directory that does not exist fails with gate_store_failed naming the file', async t => {
  const path = join(t.testdir(), 'missing', 'a.db')
  await t.rejects(openDatabase(path, { driver }), { code: 'gate_store_failed', message: new RegExp(path.replace(/[/.]/g, '\\$&')) })
})

t.test('unknown or malformed options are refused at open with gate_invalid_config', async t => {
  t.throws(() => resolveDatabaseOptions({ journal: 'WAL' } as never), { code: 'gate_invalid_config', message: /options\.journal/ })
  t.throws(() => resolveDatabaseOptions({ synchronous: 'OFF' } as never), { code: 'gate_invalid_config', message: /synchronous must be "NORMAL" or "FULL", got "OFF"/ })
  t.throws(() => resolveDatabaseOptions({ busyTimeoutMs: -1 }), { code: 'gate_invalid_config', message: /busyTimeoutMs/ })
  t.throws(() => resolveDatabaseOptions({ driver: 'better-sqlite3' } as never), { code: 'gate_invalid_config', message: /driver/ })
  t.same(resolveDatabaseOptions(undefined), { driver: 'auto', synchronous: 'NORMAL', busyTimeoutMs: 5000, walAutocheckpointPages: 4000 })
})

t.test('auto picks node:sqlite exactly when the runtime has it', async t => {
  const db = await open(t, ':memory:', { driver: 'auto' })
  t.equal(db.driver, (await isNodeSqliteAvailable()) ? 'node:sqlite' : 'sqlite3')
})

t.test('asking for node:sqlite on a runtime without it fails clearly', { skip: driver === 'node:sqlite' }, async t => {
  if (await isNodeSqliteAvailable()) return t.pass(`node:sqlite is available in Node ${process.versions.node}`)
  await t.rejects(openDatabase(':memory:', { driver: 'node:sqlite' }), { code: 'gate_store_failed', message: /node:sqlite.*not available/ })
})

t.test('a committed row is in the file after close (WAL checkpointed on close)', async t => {
  const path = join(t.testdir(), 'a.db')
  const db = await openDatabase(path, { driver })
  await db.exec('CREATE TABLE x (a TEXT)')
  await db.run('INSERT INTO x VALUES (?)', ['persisted'])
  await db.close()
  t.ok(statSync(path).size > 0)
  t.match(readFileSync(path).toString('latin1'), /persisted/)
  await t.rejects(db.get('SELECT 1'), { code: 'gate_store_failed' }, 'a closed connection refuses statements')
})
