// The checkpointer over a real SQLite receipt file: resuming from the stored frontier, two writers of
// one tree, checkpoints at multiples of N, a seq gap stopping the tree, a row another process appended
// that does not verify stopping it too (while this process's own commits need no check), and a flush
// that times out.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { bytesToHex, createMemoryNodeReader, createSigner, receiptLeafHash, signHttpReceiptJson, verifyCheckpointStatement, chainProblem, type Signer } from '@gate/sdk'
import { openDatabase, openReceiptStore, openTransparencyLogStore, type ReceiptStore } from '../stores/index.js'
import { createReceiptRow, type ReceiptRow } from '@gate/trust'
import { receiptBody, receiptRow } from '../testing/receipt-rows.js'
import { Checkpointer } from './checkpointer.js'

const signer = createSigner({ secret: new Uint8Array(32).fill(1) })
const acceptedSigners = async (keys: readonly string[]) => new Set(keys.filter(k => k === signer.publicKey))

/** The row of a real receipt `by` signed (rows another process appends are verified before they become leaves). */
function signedRow(n: number, by: Signer = signer): ReceiptRow {
  const { receipt, json } = signHttpReceiptJson(receiptBody(n), by)
  return createReceiptRow(receipt, json)
}

async function setup(t: Test, name = 'receipts.db'): Promise<{ path: string; receipts: ReceiptStore; ids: string[] }> {
  const path = join(t.testdir(), name)
  const receipts = await openReceiptStore(path)
  t.teardown(() => receipts.close())
  return { path, receipts, ids: [] }
}

async function append(receipts: ReceiptStore, ids: string[], count: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => signedRow(ids.length + i))
  await receipts.log.appendMany(rows)
  ids.push(...rows.map(r => r.receiptId))
}

async function checkpointer(t: Test, path: string, options: Partial<ConstructorParameters<typeof Checkpointer>[0]> = {}) {
  const backend = await openTransparencyLogStore(path)
  const c = new Checkpointer({ backend, signer: () => signer, acceptedSigners, everyReceipts: 0, intervalMs: 0, ...options })
  t.teardown(async () => {
    await c.stop()
    await backend.close()
  })
  return { c, backend }
}

const rootOf = (ids: readonly string[]) => bytesToHex(createMemoryNodeReader(ids.map(receiptLeafHash)).tree.root())

t.test('a reopened tree resumes from its stored frontier and reaches the same roots', async t => {
  const { path, receipts, ids } = await setup(t)
  await append(receipts, ids, 37)
  const first = await checkpointer(t, path)
  t.match(await first.c.createCheckpoint(), { created: true, checkpoint: { tree_size: 37, root_hash: rootOf(ids) } })
  await first.c.stop()
  await first.backend.close()
  await append(receipts, ids, 29)
  const second = await checkpointer(t, path)
  const { checkpoint } = await second.c.createCheckpoint()
  t.match(checkpoint, { tree_size: 66, root_hash: rootOf(ids) })
  const older = await second.backend.checkpoint(37)
  t.equal(chainProblem(older!, checkpoint!), undefined, 'linked to the statement before')
  t.match(verifyCheckpointStatement(checkpoint, { trustedKeys: [signer.publicKey] }), { ok: true })
  t.same(await second.c.createCheckpoint(), { checkpoint, created: false }, 'nothing new: no new statement')
})

t.test('two checkpointers growing one file agree on every node', async t => {
  const { path, receipts, ids } = await setup(t)
  const a = await checkpointer(t, path)
  const b = await checkpointer(t, path)
  for (let round = 0; round < 6; round++) {
    await append(receipts, ids, 5 + round * 3)
    await Promise.all([a.c.catchUp(), b.c.catchUp(), round % 2 === 0 ? a.c.catchUp() : b.c.catchUp()])
  }
  t.equal(await a.backend.treeSize(), ids.length)
  const { checkpoint } = await b.c.createCheckpoint()
  t.equal(checkpoint?.root_hash, rootOf(ids))
  t.same((await a.c.createCheckpoint()).created, false, 'the other sees the checkpoint already made')
})

t.test('with everyReceipts N a checkpoint is signed at each multiple of N', async t => {
  const { path, receipts, ids } = await setup(t)
  const { c, backend } = await checkpointer(t, path, { everyReceipts: 4 })
  await append(receipts, ids, 9)
  await c.catchUp()
  await append(receipts, ids, 5)
  await c.catchUp()
  t.same((await backend.checkpoints(0, 100)).map(s => s.tree_size), [4, 8, 12])
  t.equal((await backend.checkpoint(8))?.root_hash, rootOf(ids.slice(0, 8)))
})

t.test('a seq gap stops the tree and is reported, never skipped', async t => {
  const { path, receipts, ids } = await setup(t)
  await append(receipts, ids, 6)
  const db = await openDatabase(path)
  await db.exec('DELETE FROM receipts WHERE seq = 4')
  await db.close()
  const lines: string[] = []
  const { c, backend } = await checkpointer(t, path, { log: line => lines.push(line) })
  await t.rejects(c.catchUp(), { code: 'gate_store_failed', message: /receipt seq 5 follows leaf 2 \(seq 3\): receipts are missing/ })
  t.equal(await backend.treeSize(), 3, 'the contiguous part was stored')
  c.start() // a background pass: stop() waits for it
  await c.stop()
  t.match(c.lastError?.message ?? '', /receipts are missing/, 'the background pass records the failure')
  t.match(lines, [/transparency log: .*receipts are missing/])
})

t.test("a row another process appended that does not verify stops the tree before it, counted once", async t => {
  const { path, receipts, ids } = await setup(t)
  await append(receipts, ids, 4)
  const altered = signedRow(4)
  await receipts.log.appendMany([{ ...altered, httpJson: altered.httpJson!.replace('"method":"POST"', '"method":"POSt"') }, signedRow(5)])
  const stranger = createSigner({ secret: new Uint8Array(32).fill(2) })
  const steps: string[] = []
  const { c, backend } = await checkpointer(t, path, { onUnverified: step => steps.push(step) })
  await t.rejects(c.catchUp(), { code: 'gate_store_failed', message: /receipt seq 5 \([0-9a-f]{64}\) does not verify \(receipt_id: .*\): it is not added to the log/ })
  t.equal(await backend.treeSize(), 4, 'the rows before it became leaves')
  await t.rejects(c.createCheckpoint(), /receipt seq 5/, 'no checkpoint covers it, on any later try')
  t.same(steps, ['receipt_id'], 'one refusal counted, however often it is retried')

  // a receipt signed by a key the log does not accept, in a file of its own
  const other = await setup(t, 'other.db')
  await other.receipts.log.appendMany([signedRow(0), signedRow(1, stranger)])
  const { c: c2, backend: b2 } = await checkpointer(t, other.path)
  await t.rejects(c2.catchUp(), /receipt seq 2 .*does not verify \(signer: /)
  t.equal(await b2.treeSize(), 1)
})

t.test("this process's own commits become leaves without their stored text being read", async t => {
  const { path, receipts } = await setup(t)
  // rows whose text is no receipt at all: only a check would refuse them
  const rows = [receiptRow(0), receiptRow(1), receiptRow(2)]
  const seqs = await receipts.log.appendMany(rows)
  const { c, backend } = await checkpointer(t, path)
  c.onCommitted({ firstSeq: seqs[0]!.seq, lastSeq: seqs[2]!.seq, receiptIds: rows.map(r => r.receiptId) })
  t.equal(await c.catchUp(), 3)
  t.equal(await backend.treeSize(), 3)
  // the same kind of row, appended by someone else: refused
  await receipts.log.append(receiptRow(3))
  await t.rejects(c.catchUp(), /receipt seq 4 .*does not verify \(shape: /)
})

t.test('a flush whose writer does not commit in time fails with gate_timeout', async t => {
  const { path } = await setup(t)
  // a writer that never commits cannot be produced with a real store, so this one fault is simulated
  const { c } = await checkpointer(t, path, { flushReceipts: () => new Promise<void>(() => undefined) })
  await t.rejects(c.flush(20), { code: 'gate_timeout', message: /within 20 ms/ })
})

t.test('a commit notification and the interval timer each lead to a checkpoint', async t => {
  const { path, receipts, ids } = await setup(t)
  const signed: number[] = []
  let next: (() => void) | undefined
  const checkpointed = () => new Promise<void>(resolve => (next = resolve))
  const { c } = await checkpointer(t, path, {
    everyReceipts: 3,
    intervalMs: 25,
    gatherMs: 1,
    onCheckpoint: s => {
      signed.push(s.tree_size)
      next?.()
    },
  })
  // the checkpointer's timers do not hold the process open (a service's server does): this test must
  const keepAlive = setInterval(() => undefined, 60_000)
  t.teardown(() => clearInterval(keepAlive))
  c.start()
  const first = checkpointed()
  await append(receipts, ids, 3)
  c.onCommitted() // the follower call the writer makes after a commit
  await first
  t.same(signed, [3], 'three receipts reach the count')
  const second = checkpointed()
  await append(receipts, ids, 1)
  await second // no notification: the timer finds the log grew
  t.same(signed, [3, 4])
  await c.stop()
})
