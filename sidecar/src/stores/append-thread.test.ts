// The receipt append thread (node:sqlite only), on real files. Node 20 has no node:sqlite: this file
// skips there, and node-sqlite-driver.test re-runs it under GATE_NODE24 with the other store suites.
import t from 'tap'
import { join } from 'node:path'
import { AppendThreadUnavailable, createAppendThread } from './append-thread.js'
import { loadNodeSqlite } from './node-sqlite-driver.js'
import { openReceiptStore, type ReceiptRow, type StoredReceipt } from './receipt-store.js'
import { receiptRow } from '../testing/receipt-rows.js'

const skip = loadNodeSqlite() === undefined ? `no node:sqlite in Node ${process.versions.node} (node-sqlite-driver.test runs this under GATE_NODE24)` : false

// varied enough that every indexed column sees more than one value
const row = (n: number): ReceiptRow =>
  receiptRow(n, { method: 'POST', routePattern: '/pets/{id}', toolName: 'POST /pets/{id}', outcome: n % 3 === 0 ? 'deny' : 'allow', capabilityId: n % 2 === 0 ? `cap-${n % 5}` : null, tenant: n % 4 === 0 ? 'acme' : null })

async function stored(path: string): Promise<StoredReceipt[]> {
  const store = await openReceiptStore(path, { driver: 'node:sqlite', appendThread: false, backgroundCheckpoints: false })
  const rows: StoredReceipt[] = []
  for await (const r of store.iterate()) rows.push(r)
  await store.close()
  return rows
}

t.test('a node:sqlite store appends on the thread: the same rows, seq and buckets as on the main thread', { skip }, async t => {
  const dir = t.testdir()
  const rows = Array.from({ length: 300 }, (_, n) => row(n))
  const results: Record<string, number[]> = {}
  for (const appendThread of [true, false]) {
    const errors: Error[] = []
    const store = await openReceiptStore(join(dir, `${appendThread}.db`), { driver: 'node:sqlite', appendThread, onAppendThreadError: err => errors.push(err) })
    // concurrent appends: group commit batches them, several batches go to the thread
    results[String(appendThread)] = (await Promise.all(rows.map(r => store.append(r)))).map(r => r.seq)
    await store.close()
    t.same(errors, [], `appendThread ${appendThread}: no thread error`)
  }
  t.same(results['true'], results['false'], 'every append resolved with the same seq')
  t.same(results['true'], rows.map((_, i) => i + 1), 'seq follows append order')
  const [onThread, onMain] = [await stored(join(dir, 'true.db')), await stored(join(dir, 'false.db'))]
  t.same(onThread, onMain, 'the files hold the same rows')
  t.ok(onThread.every(r => r.seq === results['true']![rows.findIndex(x => x.receiptId === r.receiptId)]), 'each row under the seq its append returned')
})

t.test('the thread appends after rows another connection wrote, in one transaction per batch', { skip }, async t => {
  const path = join(t.testdir(), 'r.db')
  const store = await openReceiptStore(path, { driver: 'node:sqlite', appendThread: false })
  for (let n = 0; n < 5; n++) await store.append(row(n))
  await store.flush()
  const thread = createAppendThread(path, { driver: 'node:sqlite' }, { walAutocheckpointPages: 1000 })
  t.teardown(() => thread.close())
  const values = (r: ReceiptRow) => [r.receiptId, 1, r.timestamp, r.requestId, r.method, r.routePattern, r.toolServer, r.toolName, r.outcome, r.capabilityId ?? null, r.tenant ?? null, null, null, null, null, r.kind, null, r.httpJson, null]
  t.same(await thread.append([values(row(5)), values(row(6))]), { lastInsertRowid: 7 }, 'continues after the end of the table')
  t.same(await store.latestSeq(), 7, 'the store reads what the thread committed')
  await t.rejects(thread.append([['not enough columns']]), /NOT NULL constraint failed/, 'a failing statement rejects that batch only (rolled back)')
  t.same(await thread.append([values(row(7))]), { lastInsertRowid: 8 }, 'and the next batch commits after it, with the seq the failed one did not take')
  t.equal(thread.retired, false)
  await thread.close()
  t.equal(thread.retired, true)
  await t.rejects(thread.append([values(row(8))]), AppendThreadUnavailable, 'after close, appends are refused unsent')
  await store.close()
})

t.test('a thread that cannot open its file rejects the batch, says so once and retires', { skip }, async t => {
  const errors: Error[] = []
  const thread = createAppendThread(join(t.testdir(), 'missing-dir', 'r.db'), { driver: 'node:sqlite' }, { walAutocheckpointPages: 1000, onError: err => errors.push(err) })
  await t.rejects(thread.append([[1]]), { name: 'AppendThreadUnavailable', message: /could not open/ }, 'refused unsent')
  t.equal(thread.retired, true)
  t.equal(errors.length, 1)
  t.match(errors[0]!.message, /the receipt append thread could not open/)
  await t.rejects(thread.append([[1]]), AppendThreadUnavailable)
  t.equal(errors.length, 1, 'told once')
  await thread.close()
})
