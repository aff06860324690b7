// The transparency log's SQLite backend, with the driver under test (GATE_STORE_DRIVER; re-run on
// node:sqlite by node-sqlite-driver.test): tables added to a receipt file, compare-and-set appends,
// node reads, checkpoints in one transaction, and refusals.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { createMemoryNodeReader, createSigner, receiptLeafHash, rootAt, signCheckpointStatement, statementHash, bytesToHex, type CheckpointStatement, type TreeNode } from '@gate/sdk'
import { openDatabase, openReceiptStore, openTransparencyLogStore } from './index.js'
import { receiptRow } from '../testing/receipt-rows.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const signer = createSigner({ secret: new Uint8Array(32).fill(4) })

async function receiptFile(t: Test, count: number): Promise<{ path: string; ids: string[] }> {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openReceiptStore(path, { driver })
  const rows = Array.from({ length: count }, (_, n) => receiptRow(n))
  await store.log.appendMany(rows)
  await store.close()
  return { path, ids: rows.map(r => r.receiptId) }
}

t.test('a receipt file gains the log tables; receipts read in seq order', async t => {
  const { path, ids } = await receiptFile(t, 5)
  const log = await openTransparencyLogStore(path, { driver })
  t.teardown(() => log.close())
  t.match(await log.logId(), /^[0-9a-f]{64}$/)
  t.equal(await log.treeSize(), 0)
  t.same((await log.receiptsAfter(2, 10)).map(r => [r.seq, r.receiptId]), [[3, ids[2]], [4, ids[3]], [5, ids[4]]])
  t.match(await log.latestReceipt(), { seq: 5 })
  t.equal((await log.auditedReceiptsAfter(4, 10))[0]?.httpJson?.includes(ids[4]!), true)
  const again = await openTransparencyLogStore(path, { driver })
  t.equal(await again.logId(), await log.logId(), 'the log id is created once')
  await again.close()
})

t.test('nodes are stored compare-and-set on the tree size and read back exactly', async t => {
  const { path, ids } = await receiptFile(t, 7)
  const log = await openTransparencyLogStore(path, { driver })
  t.teardown(() => log.close())
  const memory = createMemoryNodeReader([])
  const nodes: TreeNode[] = []
  for (const id of ids) memory.tree.append(receiptLeafHash(id), n => nodes.push(n))
  t.equal(await log.appendNodes(1, 7, nodes), false, 'a stale expected size writes nothing')
  t.equal(await log.treeSize(), 0)
  t.equal(await log.leafHashesFrom(0, 10).then(h => h.length), 0, 'no node of the refused batch was stored')
  await t.rejects(log.appendNodes(0, 7, [{ ...nodes[0]!, index: -1 }]), { code: 'gate_bad_request' }, 'a position that is not a non-negative integer never reaches the SQL text')
  t.equal(await log.appendNodes(0, 7, nodes), true, 'the connection is usable after a refused batch (rolled back)')
  t.equal(await log.treeSize(), 7)
  t.equal(bytesToHex(await rootAt(7, log)), bytesToHex(memory.tree.root()), 'the stored nodes rebuild the root')
  t.equal((await log.leafHashesFrom(5, 10)).length, 2)
  await t.rejects(log.nodes([{ level: 3, index: 0 }]), { code: 'gate_store_failed', message: /has no tree node 3:0/ })
  const db = await openDatabase(path, { driver })
  await db.exec('DELETE FROM transparency_nodes WHERE level = 0 AND idx = 3')
  await db.close()
  t.equal((await log.leafHashesFrom(0, 10)).length, 3, 'a missing leaf ends the run')
})

t.test('checkpoints are added against the newest one inside one transaction', async t => {
  const { path } = await receiptFile(t, 1)
  const log = await openTransparencyLogStore(path, { driver })
  t.teardown(() => log.close())
  const statement = (size: number): CheckpointStatement =>
    signCheckpointStatement({ log_id: 'ab'.repeat(32), tree_size: size, root_hash: 'cd'.repeat(32), timestamp: 1 }, signer)
  t.same(await log.addCheckpoint(latest => (t.equal(latest, undefined), statement(3))), { checkpoint: statement(3), created: true })
  t.same(await log.addCheckpoint(() => undefined), { checkpoint: statement(3), created: false })
  await log.addCheckpoint(() => statement(9))
  t.same((await log.checkpoints(0, 10)).map(s => s.tree_size), [3, 9])
  t.same((await log.checkpoints(3, 10)).map(s => s.tree_size), [9])
  t.equal(await log.checkpointCount(), 2)
  t.same(await log.checkpoint(9), statement(9))
  t.equal(await log.checkpoint(4), undefined)
  await t.rejects(log.addCheckpoint(() => statement(9)), 'a second statement of one size is refused')
  t.equal(await log.checkpointCount(), 2)
})

t.test('checkpointers on two connections racing make one chain: each builds on the newest stored', async t => {
  const { path } = await receiptFile(t, 1)
  const a = await openTransparencyLogStore(path, { driver })
  const b = await openTransparencyLogStore(path, { driver })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  const next = (latest: CheckpointStatement | undefined) =>
    signCheckpointStatement(
      { log_id: 'ab'.repeat(32), tree_size: (latest?.tree_size ?? 0) + 1, root_hash: 'cd'.repeat(32), timestamp: 1, chain_root: latest === undefined ? undefined : statementHash(latest) },
      signer,
    )
  // one at a time per process (the checkpointer's own calls are exclusive), the two processes at once
  const results = (
    await Promise.all(
      [a, b].map(async log => {
        const mine = []
        for (let i = 0; i < 10; i++) mine.push(await log.addCheckpoint(next))
        return mine
      }),
    )
  ).flat()
  t.ok(results.every(r => r.created), 'every call stored one')
  const chain = await a.checkpoints(0, 100)
  t.same(chain.map(s => s.tree_size), Array.from({ length: 20 }, (_, i) => i + 1), 'no size taken twice, none skipped')
  for (let i = 1; i < chain.length; i++) t.equal(chain[i]!.chain_root, statementHash(chain[i - 1]!), `checkpoint ${i + 1} chains to the one before`)
})

t.test('a file that is not a receipt store is refused', async t => {
  const path = join(t.testdir(), 'other.db')
  const db = await openDatabase(path, { driver })
  await db.exec('CREATE TABLE other (x)')
  await db.close()
  await t.rejects(openTransparencyLogStore(path, { driver }), { code: 'gate_store_failed', message: /is not a receipt store/ })
})
