// GroupCommit over a table kept in memory: each batch is applied whole or not at all (a value 'boom'
// fails the batch it is in, as a CHECK constraint would), so the queue's batching, ordering, failure and
// flush rules are checked without a database. The SQLite stores' transactional group commit, over a
// real file, is tested in @gate/sidecar (stores/transactional-store.test.ts).
import t, { type Test } from 'tap'
import { StoreFailedError } from '../errors.js'
import { GroupCommit, type GroupCommitOptions } from './group-commit.js'

interface Fixture {
  /** The committed rows, in seq order. */
  rows: string[]
  queue: GroupCommit<string, number>
}

function setup(t: Test, options: Partial<GroupCommitOptions<string, number>> = {}): Fixture {
  const rows: string[] = []
  const queue = new GroupCommit<string, number>({
    // resolved on a later turn, like a database's commit; nothing of a failing batch is kept
    commitBatch: async items => {
      await new Promise(resolve => setImmediate(resolve))
      const boom = items.find(value => value === 'boom')
      if (boom !== undefined) throw new Error("CHECK constraint failed: value <> 'boom'")
      return items.map(value => rows.push(value))
    },
    ...options,
  })
  t.teardown(() => queue.close())
  return { rows, queue }
}

t.test('200 concurrent items all commit, in fewer transactions than items', async t => {
  const { rows, queue } = setup(t)
  const seqs = await Promise.all(Array.from({ length: 200 }, (_, i) => queue.enqueue(`item-${i}`)))
  t.same(seqs, Array.from({ length: 200 }, (_, i) => i + 1), 'each item got its own seq, in enqueue order')
  t.equal(rows.length, 200)
  const { batches, items, failedBatches } = queue.stats
  t.equal(items, 200)
  t.equal(failedBatches, 0)
  t.ok(batches < 200, `batched into ${batches} transactions`)
  t.equal(queue.healthy, true)
})

t.test('an item resolves only once its batch is committed', async t => {
  const { rows, queue } = setup(t)
  const seen = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const seq = await queue.enqueue(`v${i}`)
      return rows[seq - 1]
    }),
  )
  t.same(seen, Array.from({ length: 20 }, (_, i) => `v${i}`))
})

t.test('a batch never exceeds maxBatchSize', async t => {
  const { queue } = setup(t, { maxBatchSize: 16 })
  await Promise.all(Array.from({ length: 100 }, (_, i) => queue.enqueue(String(i))))
  t.ok(queue.stats.largestBatch <= 16, `largest batch ${queue.stats.largestBatch}`)
  t.ok(queue.stats.batches >= 7)
})

t.test('a failing commit rejects every item of its batch with gate_receipt_persistence_failed and flips healthy', async t => {
  const errors: Error[] = []
  let recovered = 0
  const { rows, queue } = setup(t, { onError: err => errors.push(err), onRecover: () => recovered++ })
  // Enqueued in one synchronous run, so they form one batch.
  const batch = ['a', 'b', 'boom', 'c'].map(value => queue.enqueue(value))
  const settled = await Promise.allSettled(batch)
  t.same(settled.map(s => s.status), ['rejected', 'rejected', 'rejected', 'rejected'])
  for (const s of settled) {
    t.match((s as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', status: 500, batchSize: 4, message: /CHECK constraint/ })
  }
  t.equal(rows.length, 0, 'nothing of the batch was committed')
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
  const { queue } = setup(t, { toError: cause => new StoreFailedError('budgets', 'x.db', 'commit failed', cause) })
  await t.rejects(queue.enqueue('boom'), { code: 'gate_store_failed', name: 'StoreFailedError' })
})

t.test('flush resolves once everything enqueued before it is committed, while more keeps arriving', async t => {
  const { rows, queue } = setup(t, { maxBatchSize: 8 })
  const first = Array.from({ length: 50 }, (_, i) => queue.enqueue(`first-${i}`))
  const flushed = queue.flush()
  const later = Array.from({ length: 50 }, (_, i) => queue.enqueue(`later-${i}`))
  await flushed
  t.ok((rows.length) >= 50, 'the first 50 are committed')
  await Promise.all([...first, ...later])
  await queue.flush()
  t.equal(rows.length, 100)
  t.equal(queue.pending, 0)
})

t.test('flush on an idle queue resolves at once', async t => {
  const { queue } = setup(t)
  await queue.flush()
  t.pass()
})

t.test('close commits what was queued, then rejects later items', async t => {
  const { rows, queue } = setup(t)
  const queued = Array.from({ length: 10 }, (_, i) => queue.enqueue(String(i)))
  await queue.close()
  t.equal(queue.closed, true)
  t.equal((await Promise.all(queued)).length, 10)
  t.equal(rows.length, 10)
  await t.rejects(queue.enqueue('late'), { code: 'gate_receipt_persistence_failed', cause: { code: 'gate_store_failed', name: 'StoreClosedError' } })
})

t.test('a non-positive maxBatchSize is refused at construction', async t => {
  t.throws(() => new GroupCommit({ commitBatch: async () => [], maxBatchSize: 0 }), { code: 'gate_invalid_config', message: /maxBatchSize/ })
})
