// The budget store: invocation counting that is atomic under concurrency, committed before it answers,
// and exact across a reopen; cost usage for reports. The contract shared with PostgreSQL runs in
// store-contracts.test.ts.
import t, { type Test } from 'tap'
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

/** Two stores on one file, closed at teardown. */
async function twoStores(t: Test) {
  const path = join(t.testdir(), 'budgets.db')
  const a = await openBudgetStore(path, { driver })
  const b = await openBudgetStore(path, { driver })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  return [a, b] as const
}

t.test('two stores on one file cannot overspend together', async t => {
  const [a, b] = await twoStores(t)
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

t.test('capture advances every counter or none, and says which one stopped it', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  t.teardown(() => store.close())
  const grant = { owner: 'cap', key: '0:POST /pets', max: 1, fixedMax: false, kind: 'grant' as const }
  const aggregate = { owner: 'cap', key: 'aggregate', max: 5, fixedMax: false, kind: 'aggregate' as const }
  t.same(await store.capture({ invocations: [grant, aggregate], costs: [] }), { allowed: true, used: [1, 1], costUnits: [] })
  t.same(await store.capture({ invocations: [aggregate, grant], costs: [] }), { allowed: false, failed: { kind: 'invocation', index: 1, used: 1 } })
  t.same((await store.usage('cap')).grants.map(g => [g.grantKey, g.used]), [['0:POST /pets', 1], ['aggregate', 1]], 'the refused capture spent nothing')
  t.same(await store.capture({ invocations: [{ ...grant, key: 'zero', max: 0 }], costs: [] }), { allowed: false, failed: { kind: 'invocation', index: 0, used: 0 } }, 'a zero maximum denies')
})

t.test('a fixed-maximum counter refuses another maximum; a cost cap bounds the running total', async t => {
  const store = await openBudgetStore(':memory:', { driver })
  t.teardown(() => store.close())
  const family = { owner: 'family:root', key: 'family', max: 3, fixedMax: true, kind: 'family' as const }
  t.match(await store.capture({ invocations: [family], costs: [] }), { allowed: true, used: [1] })
  t.same(await store.capture({ invocations: [{ ...family, max: 30 }], costs: [] }), { allowed: false, failed: { kind: 'max_mismatch', index: 0, recordedMax: 3 } })
  const cost = { owner: 'cap', key: 'g', units: 300, currency: 'USD', maxUnits: 500 }
  t.same(await store.capture({ invocations: [], costs: [cost] }), { allowed: true, used: [], costUnits: [300] })
  t.same(await store.capture({ invocations: [family], costs: [cost] }), { allowed: false, failed: { kind: 'cost', index: 0, units: 300 } })
  t.match(await store.capture({ invocations: [family], costs: [{ ...cost, units: 200 }] }), { allowed: true, used: [2], costUnits: [500] })
  t.match((await store.usage('cap')).costs, [{ grantKey: 'g', currency: 'USD', units: 500 }])
})

t.test('two stores on one file capture together without overspending', async t => {
  const [a, b] = await twoStores(t)
  const plan = { invocations: [{ owner: 'cap-3', key: 'g', max: 40, fixedMax: false, kind: 'grant' as const }, { owner: 'family:f', key: 'family', max: 25, fixedMax: true, kind: 'family' as const }], costs: [] }
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).capture(plan)))
  t.equal(results.filter(r => r.allowed).length, 25)
  t.same((await a.usage('cap-3')).grants.map(g => g.used), [25], 'the grant counted only the captures that happened')
})

t.test('a capture whose deadline passes before its batch commits is rolled back; the rest of the batch commits', async t => {
  // the injected clock is ahead of the deadline when the capture is applied, and past it just before COMMIT
  // (a long batch, a slow disk): nothing may commit after its sender stopped waiting (issue 41, fault 1)
  const readings = [1000]
  const store = await openBudgetStore(join(t.testdir(), 'budgets.db'), { driver, clock: () => readings.shift() ?? 2000 })
  t.teardown(() => store.close())
  const late = { owner: 'cap-late', key: 'g', max: 5, fixedMax: false, kind: 'grant' as const }
  const other = { owner: 'cap-other', key: 'g', max: 5, fixedMax: false, kind: 'grant' as const }
  // enqueued in one turn: one batch, one transaction
  const [lateResult, otherResult] = await Promise.allSettled([
    store.capture({ invocations: [late], costs: [] }, { captureId: 'req-late', deadlineAt: 1500 }),
    store.capture({ invocations: [other], costs: [] }, { captureId: 'req-other' }),
  ])
  t.match(lateResult, { status: 'rejected', reason: { code: 'gate_store_unavailable', message: /deadline/ } }, 'the late capture answers 503')
  t.match(otherResult, { status: 'fulfilled', value: { allowed: true, used: [1] } }, 'its batch-mate commits')
  t.same((await store.usage('cap-late')).grants, [], 'the late capture counted nothing')
  t.same((await store.usage('cap-other')).grants.map(g => g.used), [1])
  t.match(await store.capture({ invocations: [late], costs: [] }, { captureId: 'req-late', deadlineAt: 10_000 }), { allowed: true, used: [1] }, 'its id was not used up')
})
