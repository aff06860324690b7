// CoreBackfill over a real receipt store file: every receipt of this authority gets its core form,
// foreign ones are skipped, conversion elsewhere (the signing thread) yields the same bytes as inline,
// and a conversion that fails elsewhere falls back to this thread.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { createSigner, signHttpReceiptJson } from '@gate/sdk'
import { exampleReceiptBody } from '@gate/sdk/testing'
import { toCoreJson } from '@gate/trust'
import { createReceiptRow, openReceiptStore, type ReceiptStore } from '../stores/index.js'
import { startWorkerSigner } from '../signing/worker-signer.js'
import { CoreBackfill } from './core-backfill.js'

// Polls a condition the backfill reaches by itself; the generous deadline only turns a hang into a
// failed assertion (a busy CI machine can be slow, the condition is what is being tested).
async function waitUntil(done: () => boolean, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!done() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
}

const seed = new Uint8Array(32).fill(21)
const authority = createSigner({ secret: seed })
const stranger = createSigner({ secret: new Uint8Array(32).fill(22) })

async function seededStore(t: Test, own: number): Promise<{ store: ReceiptStore; ownJsons: string[] }> {
  const store = await openReceiptStore(join(t.testdir(), 'receipts.db'))
  t.teardown(() => store.close())
  await store.createCorePendingIndex()
  const ownJsons: string[] = []
  const rows = []
  for (let i = 0; i < own; i++) {
    const { receipt, json } = signHttpReceiptJson(exampleReceiptBody({ request_id: `req-${i}`, timestamp: 1_763_700_000 + i }), authority)
    ownJsons.push(json)
    rows.push(createReceiptRow(receipt, json))
  }
  const foreign = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-foreign' }), stranger)
  rows.push(createReceiptRow(foreign.receipt, foreign.json))
  await store.appendMany(rows)
  return { store, ownJsons }
}

async function coreJsons(store: ReceiptStore, count: number): Promise<(string | null)[]> {
  const out: (string | null)[] = []
  for (let seq = 1; seq <= count; seq++) out.push((await store.getBySeq(seq))?.coreJson ?? null)
  return out
}

t.test('converted on the signing thread: the bytes inline conversion gives; foreign rows skipped', async t => {
  const { store, ownJsons } = await seededStore(t, 40)
  const worker = await startWorkerSigner(seed, authority, { offload: () => true })
  t.teardown(() => worker.close())
  const backfill = new CoreBackfill({ receipts: store, signer: () => authority, convert: jsons => worker.toCoreJsons(jsons) })
  backfill.start()
  await backfill.flush()
  await backfill.stop()
  t.match(backfill.stats, { converted: 40, skippedForeign: 1, skippedInvalid: 0, failedWrites: 0 })
  const stored = await coreJsons(store, 41)
  t.same(stored.slice(0, 40), ownJsons.map(json => (toCoreJson(json, authority) as { json: string }).json), 'same bytes as inline')
  t.equal(stored[40], null, 'the foreign receipt keeps its HTTP form only')
})

t.test('a conversion that fails elsewhere is done on this thread, and says so', async t => {
  const { store, ownJsons } = await seededStore(t, 10)
  const lines: string[] = []
  const backfill = new CoreBackfill({
    receipts: store,
    signer: () => authority,
    convert: async () => Promise.reject(new Error('thread gone')),
    log: line => lines.push(line),
  })
  backfill.start()
  await backfill.flush()
  await backfill.stop()
  t.equal(backfill.stats.converted, 10)
  t.same((await coreJsons(store, 10)), ownJsons.map(json => (toCoreJson(json, authority) as { json: string }).json))
  t.match(lines.join('\n'), /converts on the main thread: thread gone/)
})

t.test('receipts committed one by one wait for the gathering window and are converted in one pass', async t => {
  const appendOne = async (store: ReceiptStore, id: string) => {
    const { receipt, json } = signHttpReceiptJson(exampleReceiptBody({ request_id: id }), authority)
    await store.append(createReceiptRow(receipt, json))
  }

  // a running backfill over an empty store, and its counters once the start-up pass is done
  const started = async (t: Test, gatherMs: number) => {
    const { store } = await seededStore(t, 0)
    const backfill = new CoreBackfill({ receipts: store, signer: () => authority, gatherMs })
    backfill.start()
    await backfill.flush()
    return { store, backfill, before: { ...backfill.stats } }
  }

  await t.test('gathering: after a pass nothing converts inside the window; a flush cuts it short', async t => {
    const { store, backfill, before } = await started(t, 60_000)
    for (let i = 0; i < 10; i++) await appendOne(store, `gathered-${i}`)
    await new Promise(resolve => setTimeout(resolve, 50))
    // the loop may have been between its last look and its sleep when the first receipts came: at most
    // one pass then, and the window after it
    t.ok(backfill.stats.passes - before.passes <= 1, 'at most one pass before the window')
    t.ok(backfill.stats.converted - before.converted <= 9, 'the later receipts wait')
    await backfill.flush()
    t.equal(backfill.stats.converted - before.converted, 10)
    t.ok(backfill.stats.passes - before.passes <= 2, 'one or two passes for ten commits')
    await backfill.stop()
  })

  await t.test('gatherMs 0: each commit is looked at at once', async t => {
    const { store, backfill, before } = await started(t, 0)
    for (let i = 0; i < 5; i++) {
      await appendOne(store, `at-once-${i}`)
      await waitUntil(() => backfill.stats.converted - before.converted === i + 1)
    }
    t.equal(backfill.stats.converted - before.converted, 5, 'converted without a flush')
    t.equal(backfill.stats.passes - before.passes, 5, 'a pass per commit')
    await backfill.stop()
  })
})

t.test('a flush does not wait out the busy wait', async t => {
  const { store } = await seededStore(t, 4)
  const backfill = new CoreBackfill({ receipts: store, signer: () => authority, busy: () => true, busyDelayMs: 60_000 })
  backfill.start()
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(backfill.stats.converted, 0, 'busy: waiting')
  await backfill.flush()
  t.equal(backfill.stats.converted, 4, 'the flush converted everything without waiting a minute')
  await backfill.stop()
})

t.test('while the service is busy nothing is converted; once idle everything is', async t => {
  const { store } = await seededStore(t, 12)
  let busy = true
  const backfill = new CoreBackfill({ receipts: store, signer: () => authority, busy: () => busy, busyDelayMs: 5 })
  backfill.start()
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(backfill.stats.converted, 0, 'busy: nothing converted')
  busy = false
  await waitUntil(() => backfill.stats.converted >= 12)
  t.equal(backfill.stats.converted, 12, 'idle: all converted')
  await backfill.stop()
})
