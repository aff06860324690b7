// The receipt log contract (store-ports.ts TrustReceiptLog), kept by the SQLite receipt store
// (@gate/sidecar) and PgReceiptLog: appends take consecutive seqs in commit order and resolve only once a
// reader sees them, followers hear each commit in order, a malformed row fails alone, core forms are
// recorded on existing rows only, and a closed log takes no more appends.
import type { Test } from 'tap'
import type { CommittedReceipts } from '../../stores/receipt-row.js'
import type { TrustReceiptStore } from '../../store-ports.js'
import { receiptRow } from '../receipt-rows.js'
import type { OpenStore } from './store-factory.js'

export function testReceiptLogContract(t: Test, open: OpenStore<TrustReceiptStore>): void {
  t.test('receipt log: concurrent appends take consecutive seqs and resolve once a reader sees them', async t => {
    const { log, query } = await open(t)
    const rows = Array.from({ length: 30 }, (_, i) => receiptRow(i))
    const results = await Promise.all([log.appendMany(rows.slice(0, 10)), ...rows.slice(10).map(row => log.append(row).then(r => [r]))])
    const seqs = results.flat().map(r => r.seq)
    t.same([...seqs].sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1), 'seqs 1..30, each once')
    t.same(
      results[0]!.map(r => r.seq),
      Array.from({ length: 10 }, (_, i) => results[0]![0]!.seq + i),
      'one appendMany is consecutive, in array order',
    )
    for (const [i, row] of rows.entries()) {
      const stored = await query.getBySeq(seqs[i]!)
      t.equal(stored?.receiptId, row.receiptId, `seq ${seqs[i]} holds its row`)
    }
    t.equal(await query.latestSeq(), 30)
  })

  t.test('receipt log: followers hear every commit of this process, in commit order, until they leave', async t => {
    const { log } = await open(t)
    const batches: CommittedReceipts[] = []
    const leave = log.onCommitted(batch => batches.push(batch))
    const rows = Array.from({ length: 12 }, (_, i) => receiptRow(i))
    await Promise.all(rows.map(row => log.append(row)))
    await log.flush()
    t.equal(batches[0]?.firstSeq, 1)
    for (const [i, batch] of batches.entries()) {
      t.equal(batch.lastSeq - batch.firstSeq + 1, batch.receiptIds.length, 'a batch names each of its receipts')
      if (i > 0) t.equal(batch.firstSeq, batches[i - 1]!.lastSeq + 1, 'batches are contiguous, in commit order')
    }
    t.same(batches.flatMap(b => b.receiptIds).sort(), rows.map(r => r.receiptId).sort())
    leave()
    await log.append(receiptRow(99))
    await log.flush()
    t.equal(batches.flatMap(b => b.receiptIds).length, 12, 'nothing after unsubscribing')
  })

  t.test('receipt log: a malformed row is refused alone, before it joins a batch', async t => {
    const { log, query } = await open(t)
    const [bad, good] = await Promise.allSettled([log.append(receiptRow(1, { receiptId: 'not-hex' })), log.append(receiptRow(2))])
    t.match(bad, { status: 'rejected', reason: { code: 'gate_receipt_persistence_failed', message: /receiptId/ } })
    t.match(good, { status: 'fulfilled', value: { seq: 1 } })
    await t.rejects(log.append(receiptRow(3, { outcome: 'maybe' as never })), { code: 'gate_receipt_persistence_failed' })
    await t.rejects(log.append(receiptRow(4, { httpJson: null, coreJson: null })), { code: 'gate_receipt_persistence_failed' }, 'a row keeps one signed form')
    t.equal(await query.latestSeq(), 1)
    t.equal(log.healthy, true, 'a refused row is not a failed commit')
  })

  t.test("receipt log: a core form is recorded on an existing row; a missing row answers false", async t => {
    const { log, query } = await open(t)
    const { seq } = await log.append(receiptRow(1))
    t.equal(await log.setCoreJson(seq, '{"core":1}'), true)
    t.equal((await query.getBySeq(seq))?.coreJson, '{"core":1}')
    t.equal(await log.setCoreJson(seq + 5, '{"core":2}'), false)
    await t.rejects(log.setCoreJson(seq, ''), { code: 'gate_bad_request' })
  })

  t.test('receipt log: close commits what was queued, then refuses appends', async t => {
    const { log, query } = await open(t)
    const queued = Promise.all(Array.from({ length: 5 }, (_, i) => log.append(receiptRow(i))))
    await log.close()
    t.equal((await queued).length, 5)
    t.equal(await query.latestSeq(), 5)
    await t.rejects(log.append(receiptRow(9)), { code: 'gate_receipt_persistence_failed' })
  })
}
