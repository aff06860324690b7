// openSqliteStores / closeSqliteStores: seven files beside the receipt store, all durable, closed receipts first.
import t from 'tap'
import { createHash } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { closeSqliteStores, openSqliteStores } from './sqlite-stores.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const derivePublicKey = (seed: Uint8Array): string => createHash('sha256').update(seed).digest('hex')

t.test('openSqliteStores opens the seven stores beside the receipt store; closeSqliteStores flushes and closes them', async t => {
  const dir = t.testdir()
  const stores = await openSqliteStores({ receiptDb: join(dir, 'receipts.db'), budgetDb: join(dir, 'b.db'), derivePublicKey, driver })
  t.equal(stores.isEphemeral, false)
  t.same(stores.paths, {
    receipts: join(dir, 'receipts.db'),
    revocations: join(dir, 'receipts.revocations.db'),
    budgets: join(dir, 'b.db'),
    approvals: join(dir, 'receipts.approvals.db'),
    nonces: join(dir, 'receipts.nonces.db'),
    authority: join(dir, 'receipts.authority.db'),
    capabilities: join(dir, 'receipts.capabilities.db'),
  })
  for (const path of Object.values(stores.paths)) t.ok(existsSync(path), path)
  const appended = stores.receipts.log.append({
    receiptId: 'f'.repeat(64),
    timestamp: 1,
    requestId: 'r',
    method: 'GET',
    routePattern: '/',
    toolServer: 'http',
    toolName: 'GET /',
    outcome: 'allow',
    kind: 'decision',
    httpJson: '{}',
  })
  const consumed = stores.budgets.tryConsume('cap', 'g', 1)
  await stores.revocations.revoke('cap-r')
  await stores.authority.ensureKey(() => new Uint8Array(32).fill(7))
  await closeSqliteStores(stores)
  t.same(await appended, { seq: 1 }, 'a pending append was committed by closeSqliteStores')
  t.same(await consumed, { allowed: true, used: 1 })

  const again = await openSqliteStores({ receiptDb: join(dir, 'receipts.db'), budgetDb: join(dir, 'b.db'), derivePublicKey, driver })
  t.teardown(() => closeSqliteStores(again))
  t.equal(await again.receipts.query.count(), 1)
  t.equal(again.revocations.isRevoked('cap-r'), true)
  t.equal(again.authority.current()?.generation, 1)
  t.same(await again.budgets.tryConsume('cap', 'g', 1), { allowed: false, used: 1 })
})

t.test('an in-memory receipt path opens seven ephemeral stores', async t => {
  const stores = await openSqliteStores({ receiptDb: ':memory:', derivePublicKey, driver })
  t.teardown(() => closeSqliteStores(stores))
  t.equal(stores.isEphemeral, true)
  t.same(
    [stores.receipts, stores.revocations, stores.budgets, stores.approvals, stores.nonces, stores.authority, stores.capabilities].map(s => s.isEphemeral),
    [true, true, true, true, true, true, true],
  )
})

t.test('a store that refuses to open closes the ones already open and rethrows', async t => {
  const dir = t.testdir()
  writeFileSync(join(dir, 'receipts.nonces.db'), 'not a database at all, just text\n'.repeat(100))
  await t.rejects(openSqliteStores({ receiptDb: join(dir, 'receipts.db'), derivePublicKey, driver }), {
    code: 'gate_store_failed',
    message: /receipts\.nonces\.db as the Gate nonces store/,
  })
  // The receipt store was closed again: a fresh openSqliteStores on the same files works.
  const stores = await openSqliteStores({ receiptDb: join(dir, 'receipts.db'), nonceDb: ':memory:', derivePublicKey, driver })
  await closeSqliteStores(stores)
  t.pass()
})

t.test('bad options are refused before anything opens', async t => {
  await t.rejects(openSqliteStores({ receiptDb: ':memory:', derivePublicKey, receiptStore: 'x' } as never), {
    code: 'gate_invalid_config',
    message: /stores options\.receiptStore/,
  })
  await t.rejects(openSqliteStores({ receiptDb: ':memory:' } as never), { code: 'gate_invalid_config', message: /derivePublicKey must be a function/ })
  await t.rejects(openSqliteStores({ derivePublicKey } as never), { code: 'gate_invalid_config', message: /receiptDb/ })
  await t.rejects(openSqliteStores({ receiptDb: ':memory:', derivePublicKey, synchronous: 'OFF' } as never), { code: 'gate_invalid_config', message: /synchronous/ })
})
