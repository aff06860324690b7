// Group commit over a real SQLite file: items settle after their transaction, concurrent items share
// transactions, a failed commit rejects its whole batch and flips `healthy`, close refuses later items.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { StoreFailedError } from '../errors.js'
import { GroupCommit, transactionalGroupCommit, type GroupCommitOptions } from './group-commit.js'
import { openDatabase, type SqliteDatabase } from './sqlite-driver.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

interface Fixture {
  writer: SqliteDatabase
  reader: SqliteDatabase
  queue: GroupCommit<string, number>
}

// Items are strings inserted into a table whose CHECK refuses 'boom': a real commit failure on demand.
async function setup(t: Test, options: Partial<GroupCommitOptions<string, number>> = {}): Promise<Fixture> {
  const path = join(t.testdir(), 'queue.db')
  const writer = await openDatabase(path, { driver })
  await writer.exec("CREATE TABLE items (seq INTEGER PRIMARY KEY, value TEXT NOT NULL CHECK (value <> 'boom'))")
  const reader = await openDatabase(path, { driver })
  const queue = new GroupCommit<string, number>({
    commitBatch: items =>
      writer.transaction(async tx => {
        const seqs: number[] = []
        for (const value of items) seqs.push((await tx.run('INSERT INTO items (value) VALUES (?)', [value])).lastInsertRowid)
        return seqs
      }),
    ...options,
  })
  t.teardown(async () => {
    await queue.close()
    await reader.close()
    await writer.close()
  })
  return { writer, reader, queue }
}

async function countRows(db: SqliteDatabase): Promise<number> {
  return (await db.get<{ n: number }>('SELECT count(*) AS n FROM items'))!.n
}

t.test('200 concurrent items all commit, in fewer transactions than items', async t => {
  const { reader, queue } = await setup(t)
  const seqs = await Promise.all(Array.from({ length: 200 }, (_, i) => queue.enqueue(`item-${i}`)))
  t.same(seqs, Array.from({ length: 200 }, (_, i) => i + 1), 'each item got its own seq, in enqueue order')
  t.equal(await countRows(reader), 200)
  const { batches, items, failedBatches } = queue.stats
  t.equal(items, 200)
  t.equal(failedBatches, 0)
  t.ok(batches < 200, `batched into ${batches} transactions`)
  t.equal(queue.healthy, true)
})

t.test('an item resolves only once its row is committed (another connection sees it)', async t => {
  const { reader, queue } = await setup(t)
  const seen = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const seq = await queue.enqueue(`v${i}`)
      return (await reader.get<{ value: string }>('SELECT value FROM items WHERE seq = ?', [seq]))?.value
    }),
  )
  t.same(seen, Array.from({ length: 20 }, (_, i) => `v${i}`))
})

t.test('a batch never exceeds maxBatchSize', async t => {
  const { queue } = await setup(t, { maxBatchSize: 16 })
  await Promise.all(Array.from({ length: 100 }, (_, i) => queue.enqueue(String(i))))
  t.ok(queue.stats.largestBatch <= 16, `largest batch ${queue.stats.largestBatch}`)
  t.ok(queue.stats.batches >= 7)
})

t.test('a failing commit rejects every item of its batch with gate_receipt_persistence_failed and flips healthy', async t => {
  const errors: Error[] = []
  let recovered = 0
  const { reader, queue } = await setup(t, { onError: err => errors.push(err), onRecover: () => recovered++ })
  // Enqueued in one synchronous run, so they form one batch.
  const batch = ['a', 'b', 'boom', 'c'].map(value => queue.enqueue(value))
  const settled = await Promise.allSettled(batch)
  t.same(settled.map(s => s.status), ['rejected', 'rejected', 'rejected', 'rejected'])
  for (const s of settled) {
    t.match((s as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', status: 500, batchSize: 4, message: /CHECK constraint/ })
  }
  t.equal(await countRows(reader), 0, 'nothing of the batch was committed')
  t.equal(queue.healthy, false)
  t.equal(errors.length, 1, 'onError once per failed batch')
  t.equal(queue.lastError?.code, 'gate_receipt_persistence_failed')
  t.equal(queue.stats.failedBatches, 1)

  t.equal(await queue.enqueue('d'), 1, 'the next batch commits')
  t.equal(queue.healthy, true, 'healthy again after a successful commit')
  t.equal(queue.lastError, undefined)
  t.equal(recovered, 1)
})

t.test('toError chooses the rejection of a failed batch', async t => {
  const { queue } = await setup(t, { toError: cause => new StoreFailedError('budgets', 'x.db', 'commit failed', cause) })
  await t.rejects(queue.enqueue('boom'), { code: 'gate_store_failed', name: 'StoreFailedError' })
})

t.test('transactionalGroupCommit: one transaction per batch; a failed batch rolls back whole and names the store', async t => {
  const { writer, reader } = await setup(t)
  const queue = transactionalGroupCommit(writer, 'budgets', 'budget update', async (tx, items: readonly string[]) => {
    const seqs: number[] = []
    for (const value of items) seqs.push((await tx.run('INSERT INTO items (value) VALUES (?)', [value])).lastInsertRowid)
    return seqs
  })
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

t.test('flush resolves once everything enqueued before it is committed, while more keeps arriving', async t => {
  const { reader, queue } = await setup(t, { maxBatchSize: 8 })
  const first = Array.from({ length: 50 }, (_, i) => queue.enqueue(`first-${i}`))
  const flushed = queue.flush()
  const later = Array.from({ length: 50 }, (_, i) => queue.enqueue(`later-${i}`))
  await flushed
  t.ok((await countRows(reader)) >= 50, 'the first 50 are committed')
  await Promise.all([...first, ...later])
  await queue.flush()
  t.equal(await countRows(reader), 100)
  t.equal(queue.pending, 0)
})

t.test('flush on an idle queue resolves at once', async t => {
  const { queue } = await setup(t)
  await queue.flush()
  t.pass()
})

t.test('close commits what was queued, then rejects later items', async t => {
  const { reader, queue } = await setup(t)
  const queued = Array.from({ length: 10 }, (_, i) => queue.enqueue(String(i)))
  await queue.close()
  t.equal(queue.closed, true)
  t.equal((await Promise.all(queued)).length, 10)
  t.equal(await countRows(reader), 10)
  await t.rejects(queue.enqueue('late'), { code: 'gate_receipt_persistence_failed', cause: { code: 'gate_store_failed', name: 'StoreClosedError' } })
})

t.test('a non-positive maxBatchSize is refused at construction', async t => {
  t.throws(() => new GroupCommit({ commitBatch: async () => [], maxBatchSize: 0 }), { code: 'gate_invalid_config', message: /maxBatchSize/ })
})
