// The transparency checkpointer hosted on the receipt writer thread, against a real file (GATE_STORE_DRIVER
// picks the driver): it grows the tree over the thread's commits and the inline ones, its writes and the
// inline commits never collide, and a thread that stops hands the work to a checkpointer on the event loop.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret, signHttpReceiptJson, verifyCheckpointStatement } from '@gate/sdk'
import { createReceiptRow } from '@gate/trust'
import { Checkpointer } from '../transparency/checkpointer.js'
import { openReceiptStore } from './receipt-store.js'
import { createInlineReceiptWriter, type ReceiptWriter } from './receipt-writer.js'
import { startThreadedReceiptWriter } from './threaded-receipt-writer.js'
import { openTransparencyLogStore, type TransparencyLogStore } from './transparency-log-store.js'
import { receiptBody as body, STORE_DRIVER as driver } from '../testing/receipt-rows.js'

const seed = generateSecret('ed25519')
const signer = createSigner({ secret: seed })

// the log accepts this signer's receipts from other processes; `asked` counts the questions
function leafHooks() {
  const hooks = {
    asked: 0,
    unverified: [] as string[],
    acceptedSigners: async (keys: readonly string[]) => {
      hooks.asked++
      return new Set(keys.filter(k => k === signer.publicKey))
    },
    onUnverified: (step: string) => void hooks.unverified.push(step),
  }
  return hooks
}

async function setup(t: Test, options: { busyTimeoutMs?: number; pressure: () => boolean; entry?: URL }) {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openReceiptStore(path, { driver, busyTimeoutMs: options.busyTimeoutMs })
  const fallback = createInlineReceiptWriter({ signer: () => signer, log: store.log })
  const logged: string[] = []
  const writer = await startThreadedReceiptWriter({ store, seed, fallback, log: line => logged.push(line), pressure: options.pressure, mainConnection: store.log, entry: options.entry })
  const backend = await openTransparencyLogStore(path, { driver, busyTimeoutMs: options.busyTimeoutMs })
  t.teardown(async () => {
    await writer.close()
    await backend.close()
    await store.close()
  })
  return { writer, backend, logged }
}

// what the event loop would start should the thread stop: the same checkpointer as before this change
function localCheckpointer(backend: TransparencyLogStore, writer: ReceiptWriter, started: { count: number }) {
  return () => {
    started.count++
    const checkpointer = new Checkpointer({ backend, signer: () => signer, everyReceipts: 10, intervalMs: 0, flushReceipts: () => writer.flush(), acceptedSigners: leafHooks().acceptedSigners })
    writer.onCommitted(batch => checkpointer.onCommitted(batch))
    checkpointer.start()
    return checkpointer
  }
}

t.test('the checkpointer on the writer thread grows the tree over thread and inline commits and signs checkpoints', async t => {
  let busy = true
  const { writer, backend } = await setup(t, { pressure: () => busy })
  const local = { count: 0 }
  const hooks = leafHooks()
  const control = await writer.startCheckpointer!({ everyReceipts: 10, intervalMs: 0 }, localCheckpointer(backend, writer, local), hooks)
  const writes = []
  for (let n = 0; n < 25; n++) {
    busy = n % 2 === 0
    writes.push(writer.write(body(n)))
    if (n % 3 === 0) await new Promise(resolve => setImmediate(resolve))
  }
  await Promise.all(writes)
  const result = await control.flush(60_000)
  t.equal(result.checkpoint?.tree_size, 25, 'the flush covers every committed receipt')
  t.equal(await backend.treeSize(), 25)
  t.same((await backend.checkpoints(0, 10)).map(c => c.tree_size), [10, 20, 25], 'a checkpoint at every 10 leaves, and the flush')
  t.match(verifyCheckpointStatement(result.checkpoint, { trustedKeys: [signer.publicKey] }), { ok: true, signerTrusted: true })
  t.equal(control.lastError, undefined)
  t.equal(local.count, 0, 'nothing ran on the event loop')
  await control.stop()
})

for (const onThread of [true, false]) {
  t.test(`this process's own commits ${onThread ? 'on the thread' : 'inline'} become leaves without a check`, async t => {
    const { writer, backend } = await setup(t, { pressure: () => onThread })
    const hooks = leafHooks()
    const control = await writer.startCheckpointer!({ everyReceipts: 1000, intervalMs: 0 }, () => t.fail('no local checkpointer') as never, hooks)
    // its first pass over the empty file ends first: a pass that meets a row before the thread hears of
    // it (an inline commit is told within 100 ms) verifies it like any other, correct but not this test
    await control.flush(60_000)
    for (let n = 0; n < 5; n++) await writer.write(body(n))
    t.equal((await control.flush(60_000)).checkpoint?.tree_size, 5)
    t.equal(await backend.treeSize(), 5)
    t.equal(hooks.asked, 0, 'no signer asked about, no row read back')
    await control.stop()
  })
}

t.test('on the thread, a row another process appended that does not verify stops the tree, counted here', async t => {
  const { writer, backend } = await setup(t, { pressure: () => true })
  const hooks = leafHooks()
  const control = await writer.startCheckpointer!({ everyReceipts: 100, intervalMs: 0 }, () => t.fail('no local checkpointer') as never, hooks)
  for (let n = 0; n < 3; n++) await writer.write(body(n))
  // another process on the same file: one receipt it signed with an accepted key, then an altered one
  const other = await openReceiptStore(join(t.testdirName, 'receipts.db'), { driver })
  const good = signHttpReceiptJson(body(3), signer)
  const bad = signHttpReceiptJson(body(4), signer)
  const badRow = createReceiptRow(bad.receipt, bad.json)
  await other.log.appendMany([createReceiptRow(good.receipt, good.json), { ...badRow, httpJson: badRow.httpJson!.replace('"method":"POST"', '"method":"POSt"') }])
  await other.close()
  await t.rejects(control.flush(60_000), /receipt seq 5 .*does not verify \(receipt_id: /)
  t.equal(await backend.treeSize(), 4, "the thread's own rows and the verified foreign one became leaves")
  t.ok(hooks.asked >= 1, 'the event loop was asked which signers the log accepts')
  t.same(hooks.unverified, ['receipt_id'], 'the refusal was counted once, on the event loop')
  await control.stop()
})

t.test('with no busy timeout, tree writes and inline commits take turns and lose nothing', async t => {
  // one write at a time, three in four inline; a checkpoint per receipt keeps the thread writing its
  // tree and checkpoints meanwhile; until the tree has grown in several passes (or a bound is reached)
  let busy = false
  const { writer, backend } = await setup(t, { busyTimeoutMs: 0, pressure: () => busy })
  const control = await writer.startCheckpointer!({ everyReceipts: 1, intervalMs: 0 }, () => t.fail('no local checkpointer') as never, leafHooks())
  const sizes = new Set<number>()
  let written = 0
  for (; written < 20_000 && sizes.size < 6; written++) {
    busy = written % 4 === 0
    await writer.write(body(written))
    if (written % 10 === 0) sizes.add(await backend.treeSize())
  }
  t.ok(sizes.size >= 6, `the tree grew in ${sizes.size - 1} passes while ${written} receipts were written`)
  t.equal((await control.flush(60_000)).checkpoint?.tree_size, written)
  t.equal(control.lastError, undefined, 'no tree write failed on a locked file')
  t.equal(writer.healthy, true, 'no receipt commit failed on a locked file')
  await control.stop()
})

t.test('a writer thread that stops hands the checkpointer to the event loop', async t => {
  const { writer, backend, logged } = await setup(t, { pressure: () => true, entry: new URL('../testing/exiting-writer-thread.js', import.meta.url) })
  const local = { count: 0 }
  const control = await writer.startCheckpointer!({ everyReceipts: 10, intervalMs: 0 }, localCheckpointer(backend, writer, local), leafHooks())
  await t.rejects(writer.write(body(1)), { code: 'gate_receipt_persistence_failed' }, 'the write the thread held is lost')
  t.match(logged, [/writer thread stopped/])
  t.equal(local.count, 1, 'a checkpointer started on the event loop')
  await writer.write(body(2))
  t.equal((await control.flush(60_000)).checkpoint?.tree_size, 1, 'it covers what was committed since')
  await control.stop()
})
