// Fault 1 of issue 41 on a SQLite trust-control: a capture that waits behind the budget file's write
// lock (another connection holds it, as a second process sharing the file would) longer than the
// sidecar waits is answered `budget_authority_unreachable`, and when the lock goes it does not commit
// after all. Real processes and a real SQLite file.
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../stores/index.js'
import { evaluate, issueCentrally, startFleetSidecar, startTrustControl } from '../testing/fleet.js'

t.test('on SQLite, a capture held behind the write lock is denied and never counts, even once the lock goes', async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const sidecar = await startFleetSidecar(t, dir, 1, control.url)
  const capability = await issueCentrally(control.url, 10)
  t.match(await evaluate(sidecar.url, capability), { verdict: 'allow' })

  // trust-control's budget file (store-paths.ts: beside --receipt-db)
  const budgets = await openDatabase(join(dir, 'control', 'receipts.budgets.db'), { busyTimeoutMs: 0 })
  t.teardown(() => budgets.close())
  const used = async () => (await budgets.get<{ used: number }>('SELECT used FROM invocation_budgets WHERE capability_id = ?', [capability.id]))?.used
  // captures that committed, whether or not a cancel gave them back later (a cancel arriving first records no plan)
  const committed = async () => (await budgets.get<{ n: number }>('SELECT count(*) AS n FROM budget_captures WHERE plan IS NOT NULL'))?.n
  t.equal(await used(), 1)

  await budgets.exec('BEGIN IMMEDIATE')
  t.match(await evaluate(sidecar.url, capability), { verdict: 'deny', reasonCode: 'budget_authority_unreachable' }, 'the sidecar denies the call')
  await budgets.exec('COMMIT')

  // the group commit is first in, first out: this capture commits after the held one was settled
  t.match(await evaluate(sidecar.url, capability), { verdict: 'allow' }, 'the next call is allowed')
  t.equal(await used(), 2, 'the denied call counted nothing')
  t.equal(await committed(), 2, 'and never committed (not counted, then given back by its cancel)')
})
