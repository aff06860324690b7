// Store paths: siblings of the receipt store, explicit paths win, in-memory forms mean ephemeral.
import t from 'tap'
import { deriveStorePaths, isInMemoryPath } from './store-paths.js'

t.test('siblings of /x/receipts.db are /x/receipts.<store>.db', async t => {
  t.same(deriveStorePaths('/x/receipts.db'), {
    receipts: '/x/receipts.db',
    revocations: '/x/receipts.revocations.db',
    budgets: '/x/receipts.budgets.db',
    approvals: '/x/receipts.approvals.db',
    nonces: '/x/receipts.nonces.db',
    authority: '/x/receipts.authority.db',
    capabilities: '/x/receipts.capabilities.db',
  })
})

t.test('the extension is kept, and a path without one gets .db', async t => {
  t.equal(deriveStorePaths('state/gate.sqlite').budgets, 'state/gate.budgets.sqlite')
  t.equal(deriveStorePaths('/var/lib/gate/receipts').nonces, '/var/lib/gate/receipts.nonces.db')
})

t.test('explicit paths (--revocation-db, --budget-db, …) win', async t => {
  const paths = deriveStorePaths('/x/receipts.db', { revocations: '/y/rev.db', authority: '/secrets/authority.db' })
  t.equal(paths.revocations, '/y/rev.db')
  t.equal(paths.authority, '/secrets/authority.db')
  t.equal(paths.budgets, '/x/receipts.budgets.db')
})

t.test('an in-memory receipt path makes every store without an explicit path in-memory', async t => {
  for (const receipts of [':memory:', '', 'file::memory:?cache=shared', 'file:receipts?mode=memory&cache=shared']) {
    const paths = deriveStorePaths(receipts, { budgets: '/x/budgets.db' })
    t.equal(paths.receipts, ':memory:', JSON.stringify(receipts))
    t.equal(paths.revocations, ':memory:')
    t.equal(paths.budgets, '/x/budgets.db')
  }
})

t.test('isInMemoryPath recognises every in-memory form and nothing else', async t => {
  for (const path of [undefined, null, '', ' ', ':memory:', 'file::memory:', 'file::memory:?cache=shared', 'file:x.db?mode=memory']) {
    t.equal(isInMemoryPath(path), true, JSON.stringify(path))
  }
  for (const path of ['receipts.db', '/x/:memory:.db', 'memory.db', 'file:x.db', 'file:x.db?mode=rwc', './:memory']) {
    t.equal(isInMemoryPath(path), false, JSON.stringify(path))
  }
})
