// Store revision stamps (spec 03, Versioning) against real files: fresh files are stamped, foreign,
// other-store, newer and non-SQLite files are refused untouched, older revisions migrate forward.
import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { APPROVAL_SCHEMA } from './approval-store.js'
import { AUTHORITY_SCHEMA } from './authority-store.js'
import { BUDGET_SCHEMA } from './budget-store.js'
import { CAPABILITY_SCHEMA } from './capability-store.js'
import { openNodeSqliteConnection } from './node-sqlite-driver.js'
import { NONCE_SCHEMA } from './nonce-store.js'
import { RECEIPT_SCHEMA } from './receipt-store.js'
import { openStoreDatabase, readStoreStamp, STORE_APPLICATION_IDS, STORE_REVISIONS, type StoreSchema } from './revision-stamp.js'
import { REVOCATION_SCHEMA } from './revocation-store.js'
import type { SqliteConnection } from './sqlite-driver.js'
import { openSqlite3Connection } from './sqlite3-driver.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const SCHEMAS: StoreSchema[] = [RECEIPT_SCHEMA, REVOCATION_SCHEMA, BUDGET_SCHEMA, APPROVAL_SCHEMA, NONCE_SCHEMA, AUTHORITY_SCHEMA, CAPABILITY_SCHEMA]

// A bare connection (no WAL, no stamp): how a foreign program would have made the file.
async function rawConnection(path: string): Promise<SqliteConnection> {
  return driver === 'node:sqlite' ? openNodeSqliteConnection(path, 1000) : openSqlite3Connection(path)
}

async function makeFile(path: string, statements: string[]): Promise<void> {
  const db = await rawConnection(path)
  for (const sql of statements) await db.exec(sql)
  await db.close()
}

async function stampOf(path: string): Promise<{ applicationId: number; revision: number; journal: string }> {
  const db = await rawConnection(path)
  const id = await db.get<{ application_id: number }>('PRAGMA application_id', [])
  const version = await db.get<{ user_version: number }>('PRAGMA user_version', [])
  const journal = await db.get<{ journal_mode: string }>('PRAGMA journal_mode', [])
  await db.close()
  return { applicationId: id!.application_id, revision: version!.user_version, journal: journal!.journal_mode }
}

t.test('the revisions are the spec 03 ones (receipts one later) and every store has its own application id', async t => {
  t.same(STORE_REVISIONS, { receipts: 4, revocations: 2, budgets: 10, approvals: 1, nonces: 1, authority: 1, capabilities: 1, edge_sessions: 1 })
  const ids = Object.values(STORE_APPLICATION_IDS)
  t.equal(new Set(ids).size, ids.length)
  t.equal(ids.length, 8)
  for (const id of ids) t.ok(Number.isInteger(id) && id > 0 && id < 2 ** 31, `${id} is a positive 32-bit id`)
})

t.test('a fresh file of each store is created, stamped with its id and revision, and reopens', async t => {
  const dir = t.testdir()
  for (const schema of SCHEMAS) {
    const path = join(dir, `${schema.store}.db`)
    const db = await openStoreDatabase(schema, path, { driver })
    t.same(await readStoreStamp(db), {
      applicationId: STORE_APPLICATION_IDS[schema.store],
      revision: STORE_REVISIONS[schema.store],
      schemaObjects: (await db.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type IN ('table','index','view','trigger')"))!.n,
    })
    await db.close()
    const again = await openStoreDatabase(schema, path, { driver })
    await again.close()
    t.same(await stampOf(path), { applicationId: STORE_APPLICATION_IDS[schema.store], revision: STORE_REVISIONS[schema.store], journal: 'wal' })
  }
})

t.test('an in-memory store is stamped too', async t => {
  const db = await openStoreDatabase(BUDGET_SCHEMA, ':memory:', { driver })
  t.equal(db.isEphemeral, true)
  t.equal((await readStoreStamp(db)).revision, 10)
  await db.close()
})

t.test('a foreign SQLite file (application_id 0, a random table) is refused untouched, with gate_store_failed', async t => {
  const path = join(t.testdir(), 'foreign.db')
  await makeFile(path, ['CREATE TABLE holiday_photos (id INTEGER PRIMARY KEY, caption TEXT)', "INSERT INTO holiday_photos (caption) VALUES ('beach')"])
  await t.rejects(openStoreDatabase(RECEIPT_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    name: 'StoreRevisionError',
    path,
    expectedStore: 'receipts',
    message: new RegExp(`refusing to open ${path.replace(/[/.]/g, '\\$&')} as the Gate receipts store \\(revision 4\\): found a foreign SQLite database \\(application_id 0`),
  })
  t.same(await stampOf(path), { applicationId: 0, revision: 0, journal: 'delete' }, 'not switched to WAL, not stamped')
  t.notOk(existsSync(`${path}-wal`))
})

t.test("another application's database is refused", async t => {
  const path = join(t.testdir(), 'other.db')
  await makeFile(path, ['PRAGMA application_id = 305419896', 'CREATE TABLE t (a)'])
  await t.rejects(openStoreDatabase(BUDGET_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    message: /as the Gate budgets store \(revision 10\): found a database of another application \(application_id 0x12345678\)/,
  })
})

t.test("another store's file is refused, naming both stores", async t => {
  const path = join(t.testdir(), 'receipts.db')
  const db = await openStoreDatabase(RECEIPT_SCHEMA, path, { driver })
  await db.close()
  await t.rejects(openStoreDatabase(BUDGET_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    expectedStore: 'budgets',
    found: 'the Gate receipts store (application_id 0x47745263, revision 4)',
  })
})

t.test('a newer revision is refused (migrations run forward only)', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const db = await openStoreDatabase(RECEIPT_SCHEMA, path, { driver })
  await db.exec('PRAGMA user_version = 5')
  await db.close()
  await t.rejects(openStoreDatabase(RECEIPT_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    message: /found revision 5, newer than revision 4 this binary supports/,
  })
})

t.test('a file that is not SQLite at all is refused', async t => {
  const path = join(t.testdir(), 'notes.db')
  writeFileSync(path, 'these are my notes, not a database\n'.repeat(200))
  await t.rejects(openStoreDatabase(NONCE_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    name: 'StoreRevisionError',
    message: /as the Gate nonces store \(revision 1\): found a file that is not a SQLite database/,
  })
})

t.test('an older revision migrates forward through the migration list, in one transaction', async t => {
  const path = join(t.testdir(), 'approvals.db')
  await makeFile(path, [`PRAGMA application_id = ${STORE_APPLICATION_IDS.approvals}`, 'PRAGMA user_version = 0', 'CREATE TABLE approvals_v0 (id TEXT)'])
  const schema: StoreSchema = { ...APPROVAL_SCHEMA, migrations: [{ from: 0, statements: ['ALTER TABLE approvals_v0 RENAME TO approvals_v1'] }] }
  const db = await openStoreDatabase(schema, path, { driver })
  t.equal((await readStoreStamp(db)).revision, 1)
  t.ok(await db.get("SELECT 1 FROM sqlite_master WHERE name = 'approvals_v1'"))
  await db.close()
})

t.test('an older revision without a migration is refused', async t => {
  const path = join(t.testdir(), 'receipts.db')
  await makeFile(path, [`PRAGMA application_id = ${STORE_APPLICATION_IDS.receipts}`, 'PRAGMA user_version = 2', 'CREATE TABLE receipts (seq INTEGER PRIMARY KEY)'])
  await t.rejects(openStoreDatabase(RECEIPT_SCHEMA, path, { driver }), {
    code: 'gate_store_failed',
    message: /found revision 2, with no migration from revision 2 to 3/,
  })
})
