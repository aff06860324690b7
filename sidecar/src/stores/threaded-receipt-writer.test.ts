// The threaded receipt writer against a real file (GATE_STORE_DRIVER picks the driver): writes resolve
// after their commit, followers hear of each batch, one bad receipt fails alone, a failed commit makes
// it unhealthy, and a thread that cannot start or dies leaves the writing to the inline writer. The
// event loop's load is injected (`pressure`): busy keeps every write on the thread, idle commits inline.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret, verifyCoreReceipt, verifyHttpReceipt, type CoreReceipt } from '@gate/sdk'
import { openReceiptStore, type ReceiptStore } from './receipt-store.js'
import type { CommittedReceipts } from '@gate/trust'
import { createInlineReceiptWriter } from './receipt-writer.js'
import { openDatabase } from './sqlite-driver.js'
import { startThreadedReceiptWriter } from './threaded-receipt-writer.js'
import { coreReceiptDraft, receiptBody as body, STORE_DRIVER as driver } from '../testing/receipt-rows.js'

const seed = generateSecret('ed25519')
const signer = createSigner({ secret: seed })

async function setup(t: Test, options: { entry?: URL; path?: string; busyTimeoutMs?: number; pressure?: () => boolean } = {}) {
  const store = await openReceiptStore(join(t.testdir(), 'receipts.db'), { driver, busyTimeoutMs: options.busyTimeoutMs })
  const logged: string[] = []
  const fallback = createInlineReceiptWriter({ signer: () => signer, log: store.log })
  const writer = await startThreadedReceiptWriter({
    store: options.path === undefined ? store : { path: options.path, databaseOptions: store.databaseOptions },
    seed,
    fallback,
    log: line => logged.push(line),
    entry: options.entry,
    pressure: options.pressure ?? (() => true),
    mainConnection: store.log,
  })
  t.teardown(async () => {
    await writer.close()
    await store.close()
  })
  return { store, writer, fallback, logged }
}

async function readAll(store: ReceiptStore) {
  const rows = []
  for await (const row of store.query.iterate()) rows.push(row)
  return rows
}

t.test('writes resolve once committed: signed, stored byte for byte, followers told in commit order', async t => {
  const { store, writer, fallback } = await setup(t)
  t.not(writer, fallback, 'the thread started')
  const batches: CommittedReceipts[] = []
  writer.onCommitted(batch => batches.push(batch))
  const first = await Promise.all(Array.from({ length: 50 }, (_, n) => writer.write(body(n), { tenant: n % 2 === 0 ? 'acme' : null })))
  const second = await writer.write(body(50), { kind: 'final', decisionReceiptId: first[0]!.receipt.id })
  const rows = await readAll(store)
  t.equal(rows.length, 51, 'every resolved write is readable from another connection')
  for (const written of [...first, second]) {
    const row = rows.find(r => r.seq === written.seq)!
    t.equal(row.httpJson, written.json, `seq ${written.seq} stored byte for byte`)
    t.ok(verifyHttpReceipt(written.receipt, { trustedKeys: [signer.publicKey] }).ok)
  }
  t.equal(rows.find(r => r.seq === first[0]!.seq)!.tenant, 'acme')
  t.match(rows.find(r => r.seq === second.seq), { kind: 'final', decisionReceiptId: first[0]!.receipt.id })
  t.same(batches.flatMap(b => b.receiptIds), rows.map(r => r.receiptId), 'followers saw every id once, in seq order')
  t.ok(batches.every((b, i) => i === 0 || b.firstSeq === batches[i - 1]!.lastSeq + 1), 'batches follow each other')
  t.ok(batches.length < 51, `${batches.length} batches for 51 writes`)
  t.equal(writer.healthy, true)
})

t.test('a receipt that cannot be signed fails alone with gate_receipt_sign_failed', async t => {
  const { store, writer } = await setup(t)
  const settled = await Promise.allSettled([writer.write(body(1)), writer.write(body(2, { trust_level: 'observed' as never })), writer.write(body(3))])
  t.same(settled.map(s => s.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((settled[1] as PromiseRejectedResult).reason, { code: 'gate_receipt_sign_failed' })
  t.equal((await readAll(store)).length, 2)
})

t.test('a commit that fails (file locked) rejects its writes and marks the writer unhealthy until one succeeds', async t => {
  const { store, writer } = await setup(t, { busyTimeoutMs: 0 })
  const other = await openDatabase(store.path, { driver, busyTimeoutMs: 0 })
  t.teardown(() => other.close())
  await other.exec('BEGIN IMMEDIATE')
  const settled = await Promise.allSettled([writer.write(body(1)), writer.write(body(2))])
  t.same(settled.map(s => s.status), ['rejected', 'rejected'])
  t.match((settled[0] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /locked|busy/i })
  t.equal(writer.healthy, false)
  await other.exec('ROLLBACK')
  t.equal((await writer.write(body(3))).seq, 1, 'the failed writes took no seq')
  t.equal(writer.healthy, true)
})

t.test('a thread that cannot start leaves every write to the inline writer', async t => {
  const { writer, fallback, logged, store } = await setup(t, { path: join(t.testdir(), 'missing', 'dir', 'receipts.db') })
  t.equal(writer, fallback)
  t.match(logged, [/receipt writer thread did not start.*signed and committed on the main thread/])
  t.equal((await writer.write(body(1))).seq, 1)
  t.equal((await readAll(store)).length, 1)
})

t.test('a thread that dies fails the writes it held (commit unknown); later writes go inline', async t => {
  const { writer, logged, store } = await setup(t, { entry: new URL('../testing/exiting-writer-thread.js', import.meta.url) })
  const lost = await Promise.allSettled([writer.write(body(1)), writer.write(body(2))])
  for (const r of lost) t.match(r, { status: 'rejected', reason: { code: 'gate_receipt_persistence_failed', message: /commit is unknown/ } })
  t.match(logged, [/writer thread stopped \(exited with code 3\)/])
  const later = await writer.write(body(3))
  t.equal(later.seq, 1)
  t.equal((await readAll(store)).length, 1)
  t.equal(writer.healthy, true)
})

t.test('close waits for the writes in flight; later writes reject', async t => {
  const { writer, store } = await setup(t)
  const pending = Array.from({ length: 20 }, (_, n) => writer.write(body(n)))
  await writer.close()
  t.equal((await Promise.all(pending)).length, 20)
  t.equal((await readAll(store)).length, 20)
  await t.rejects(writer.write(body(99)), { code: 'gate_receipt_persistence_failed' })
})

t.test('core receipts share the thread and its commits with HTTP receipts; one that cannot be signed fails alone', async t => {
  const { store, writer, fallback } = await setup(t)
  t.not(writer, fallback, 'the thread started')
  const [http, core, bad] = await Promise.allSettled([
    writer.write(body(1)),
    writer.writeCore(coreReceiptDraft(2), { requestId: 'call-2', kind: 'final', decisionReceiptId: '1'.repeat(64) }),
    writer.writeCore(coreReceiptDraft(3, { trust_level: 'advisory' }), { requestId: 'call-3' }),
  ])
  t.equal(http.status, 'fulfilled')
  t.match(bad, { status: 'rejected', reason: { code: 'gate_receipt_sign_failed', message: /mediated_decision requires trust_level mediated/ } })
  const written = (core as PromiseFulfilledResult<{ receipt: CoreReceipt; json: string; seq: number }>).value
  t.equal(verifyCoreReceipt(written.receipt, { trustedKeys: [signer.publicKey] }).ok, true)
  const rows = await readAll(store)
  t.equal(rows.length, 2)
  t.match(rows.find(r => r.seq === written.seq), { httpJson: null, coreJson: written.json, kind: 'final', decisionReceiptId: '1'.repeat(64), requestId: 'call-2' })
})

t.test('while the loop is idle a lone write commits inline and never reaches the thread', async t => {
  // the thread dies on its first message: a write that reached it would fail with "commit is unknown"
  const { writer, logged, store } = await setup(t, { entry: new URL('../testing/exiting-writer-thread.js', import.meta.url), pressure: () => false })
  const written = []
  for (let n = 1; n <= 3; n++) written.push(await writer.write(body(n)))
  t.same(written.map(w => w.seq), [1, 2, 3])
  t.ok(verifyHttpReceipt(written[0]!.receipt, { trustedKeys: [signer.publicKey] }).ok)
  t.same(logged, [], 'the thread is still running: it got nothing')
  t.equal((await readAll(store)).length, 3)
})

t.test('with more writes outstanding than a lone request makes, the thread takes them even while the loop is idle', async t => {
  const { writer, logged } = await setup(t, { entry: new URL('../testing/exiting-writer-thread.js', import.meta.url), pressure: () => false })
  const settled = await Promise.allSettled([writer.write(body(1)), writer.write(body(2)), writer.write(body(3))])
  t.same(settled.map(s => s.status), ['fulfilled', 'fulfilled', 'rejected'], 'two inline, the third to the thread')
  t.match((settled[2] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /commit is unknown/ })
  t.match(logged, [/writer thread stopped/])
})

t.test('inline and thread commits never overlap: with no busy timeout, alternating load loses nothing', async t => {
  // a second writer of the file while one commits would fail at once with busy_timeout 0
  let busy = false
  const { writer, store } = await setup(t, { busyTimeoutMs: 0, pressure: () => busy })
  const batches: CommittedReceipts[] = []
  writer.onCommitted(batch => batches.push(batch))
  const writes: Promise<{ seq: number }>[] = []
  for (let turn = 0; turn < 400; turn++) {
    busy = turn % 3 !== 0
    for (let k = 0; k < 1 + (turn % 4); k++) writes.push(writer.write(body(turn * 10 + k)))
    await new Promise(resolve => setImmediate(resolve))
  }
  const seqs = (await Promise.all(writes)).map(w => w.seq).sort((a, b) => a - b)
  t.same(seqs, Array.from({ length: writes.length }, (_, i) => i + 1), 'every write committed once, seqs without gaps')
  t.equal((await readAll(store)).length, writes.length)
  t.same(batches.flatMap(b => b.receiptIds).length, writes.length, 'followers heard of every commit, inline or threaded')
  t.equal(writer.healthy, true)
})
