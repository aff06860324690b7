// The budget store: invocation counting that is atomic under concurrency, committed before it answers,
// and exact across a reopen; cost usage for reports.
import t from 'tap'
import { join } from 'node:path'
import { openBudgetStore } from './budget-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

t.test('200 concurrent tryConsume with max 50 allow exactly 50, and none more after reopen', async t => {
  const path = join(t.testdir(), 'budgets.db')
  const store = await openBudgetStore(path, { driver })
  const results = await Promise.all(Array.from({ length: 200 }, () => store.tryConsume('cap-1', 'POST /pets', 50)))
  t.equal(results.filter(r => r.allowed).length, 50)
  t.same(results.filter(r => r.allowed).map(r => r.used).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1))
  t.ok(results.filter(r => !r.allowed).every(r => r.used === 50))
  await store.close()

  const reopened = await openBudgetStore(path, { driver })
  t.teardown(() => reopened.close())
  const again = await Promise.all(Array.from({ length: 20 }, () => reopened.tryConsume('cap-1', 'POST /pets', 50)))
  t.equal(again.filter(r => r.allowed).length, 0)
  t.match(await reopened.usage('cap-1'), { grants: [{ capabilityId: 'cap-1', grantKey: 'POST /pets', used: 50, maxInvocations: 50 }] })
})

t.test('two stores on one file cannot overspend together', async t => {
  const path = join(t.testdir(), 'budgets.db')
  const a = await openBudgetStore(path, { driver })
  const b = await openBudgetStore(path, { driver })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).tryConsume('cap-2', 'g', 25)))
  t.equal(results.filter(r => r.allowed).length, 25)
})

t.test('grants are counted separately; a zero maximum denies every invocation', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  t.teardown(() => store.close())
  t.same(await store.tryConsume('cap', 'a', 1), { allowed: true, used: 1 })
  t.same(await store.tryConsume('cap', 'a', 1), { allowed: false, used: 1 })
  t.same(await store.tryConsume('cap', 'b', 2), { allowed: true, used: 1 })
  t.same(await store.tryConsume('cap', 'z', 0), { allowed: false, used: 0 })
  t.same((await store.usage('cap')).grants.map(g => [g.grantKey, g.used]), [['a', 1], ['b', 1]])
})

t.test('a raised maximum allows more invocations', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  t.teardown(() => store.close())
  await store.tryConsume('cap', 'g', 1)
  t.equal((await store.tryConsume('cap', 'g', 1)).allowed, false)
  t.same(await store.tryConsume('cap', 'g', 2), { allowed: true, used: 2 })
})

t.test('cost usage accumulates per grant and currency', async t => {
  let clock = 100
  const store = await openBudgetStore(join(t.testdir(), 'budgets.db'), { driver, now: () => clock })
  t.teardown(() => store.close())
  await store.recordCost({ capabilityId: 'cap', grantKey: 'g', units: 250, currency: 'USD' })
  clock = 200
  await store.recordCost({ capabilityId: 'cap', grantKey: 'g', units: 100, currency: 'USD', attemptedUnits: 40 })
  await store.recordCost({ capabilityId: 'cap', grantKey: 'g', units: 7, currency: 'EUR' })
  t.same((await store.usage('cap')).costs, [
    { capabilityId: 'cap', grantKey: 'g', currency: 'EUR', units: 7, attemptedUnits: 0, updatedAt: 200 },
    { capabilityId: 'cap', grantKey: 'g', currency: 'USD', units: 350, attemptedUnits: 40, updatedAt: 200 },
  ])
  await store.tryConsume('cap', 'g', 5)
  t.same((await store.listGrants()).map(g => g.capabilityId), ['cap'])
})

t.test('bad arguments are refused with gate_bad_request, without touching the queue', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  t.teardown(() => store.close())
  await t.rejects(store.tryConsume('', 'g', 1), { code: 'gate_bad_request', message: /capabilityId/ })
  await t.rejects(store.tryConsume('cap', 'g', -1), { code: 'gate_bad_request', message: /maxInvocations/ })
  await t.rejects(store.tryConsume('cap', 'g', 1.5), { code: 'gate_bad_request' })
  await t.rejects(store.recordCost({ capabilityId: 'cap', grantKey: 'g', units: 1, currency: 'usd' }), { code: 'gate_bad_request', message: /currency/ })
  await t.rejects(store.recordCost({ capabilityId: 'cap', grantKey: 'g', units: -1, currency: 'USD' }), { code: 'gate_bad_request', message: /units/ })
  t.equal(store.healthy, true)
})

t.test('a closed store refuses updates with gate_store_failed', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  await store.close()
  await t.rejects(store.tryConsume('cap', 'g', 1), { code: 'gate_store_failed' })
})
