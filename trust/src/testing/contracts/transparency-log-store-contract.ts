// The transparency log backend contract (store-ports.ts TransparencyLogBackend), kept by the SQLite
// store in the receipt file (@gate/sidecar) and PgTransparencyLogStore: the receipts are the leaves in
// seq order, the audit reads each row's stored forms as stored (a core-only receipt with `httpJson`
// null, never its core form in `httpJson`), tree nodes grow by compare-and-set on the size, and
// checkpoints are added in one transaction with the read of the newest.
import type { Test } from 'tap'
import type { CheckpointStatement, TreeNode } from '@gate/sdk'
import type { TransparencyLogBackend, TrustReceiptLog } from '../../store-ports.js'
import { receiptRow } from '../receipt-rows.js'
import type { OpenStore } from './store-factory.js'

const CORE_JSON = '{"schema":"gate.receipt.v1","id":"core-only"}'
const hash = (n: number) => new Uint8Array(32).fill(n)
const statement = (treeSize: number): CheckpointStatement =>
  ({ schema: 'gate.checkpoint_statement.v2', log_id: 'ab'.repeat(32), tree_size: treeSize, root_hash: 'cd'.repeat(32), timestamp: 1_700_000_000 + treeSize, signer_key: 'ef'.repeat(32), signature: '01'.repeat(64) }) as CheckpointStatement

/** The log's backend and the receipt log whose rows are its leaves, over one store. */
export interface TransparencyLogStores {
  backend: TransparencyLogBackend
  log: TrustReceiptLog
}

export function testTransparencyLogStoreContract(t: Test, open: OpenStore<TransparencyLogStores>): void {
  t.test('transparency log store: an empty log, then its leaves are the receipts in seq order', async t => {
    const { backend, log } = await open(t)
    const logId = await backend.logId()
    t.match(logId, /^[0-9a-f]{64}$/)
    t.equal(await backend.logId(), logId, 'the log id stays')
    t.equal(await backend.treeSize(), 0)
    t.equal(await backend.latestReceipt(), undefined)
    t.equal(await backend.latestCheckpoint(), undefined)
    t.equal(await backend.checkpointCount(), 0)
    t.same(await backend.receiptsAfter(0, 10), [])
    const rows = [receiptRow(1), receiptRow(2), receiptRow(3)]
    await log.appendMany(rows)
    t.same(await backend.receiptsAfter(0, 10), rows.map((r, i) => ({ seq: i + 1, receiptId: r.receiptId })))
    t.same(await backend.receiptsAfter(1, 1), [{ seq: 2, receiptId: rows[1]!.receiptId }])
    t.same(await backend.latestReceipt(), { seq: 3, timestamp: rows[2]!.timestamp })
    t.ok(backend.location.length > 0)
  })

  t.test('transparency log store: the audit reads each row as stored; a core-only receipt has httpJson null', async t => {
    const { backend, log } = await open(t)
    const http = receiptRow(1, { tenant: 'acme', costUnits: 3, costCurrency: 'EUR' })
    const core = receiptRow(2, { method: 'tools/call', routePattern: 'read_file', toolServer: 'files', toolName: 'read_file', httpJson: null, coreJson: CORE_JSON })
    await log.appendMany([http, core])
    await log.setCoreJson(1, '{"core":1}')
    const audited = await backend.auditedReceiptsAfter(0, 10)
    t.match(audited[0], { seq: 1, receiptId: http.receiptId, httpJson: http.httpJson, coreJson: '{"core":1}', tenant: 'acme', costUnits: 3, costCurrency: 'EUR', kind: 'decision' })
    t.match(audited[1], { seq: 2, receiptId: core.receiptId, toolServer: 'files', toolName: 'read_file', method: 'tools/call' })
    t.equal(audited[1]?.httpJson, null, 'no HTTP form')
    t.equal(audited[1]?.coreJson, CORE_JSON, 'the signed core form, as coreJson')
    t.same(await backend.auditedReceiptsAfter(1, 10), audited.slice(1))
  })

  t.test('transparency log store: tree nodes grow by compare-and-set; leaf hashes read back in order', async t => {
    const { backend } = await open(t)
    const nodes: TreeNode[] = [
      { level: 0, index: 0, hash: hash(1) },
      { level: 0, index: 1, hash: hash(2) },
      { level: 1, index: 0, hash: hash(3) },
    ]
    t.equal(await backend.appendNodes(0, 2, nodes), true)
    t.equal(await backend.treeSize(), 2)
    t.equal(await backend.appendNodes(0, 3, [{ level: 0, index: 2, hash: hash(4) }]), false, 'the size moved: nothing written')
    t.equal(await backend.treeSize(), 2)
    t.same(await backend.nodes([{ level: 1, index: 0 }, { level: 0, index: 1 }]), [hash(3), hash(2)])
    await t.rejects(backend.nodes([{ level: 0, index: 2 }]), { code: 'gate_store_failed' }, 'a missing node is damage, never a default')
    t.equal(await backend.appendNodes(2, 3, [{ level: 0, index: 2, hash: hash(4) }]), true)
    t.same(await backend.leafHashesFrom(0, 10), [hash(1), hash(2), hash(4)])
    t.same(await backend.leafHashesFrom(1, 1), [hash(2)])
  })

  t.test('transparency log store: a checkpoint is added against the newest, and read back by size', async t => {
    const { backend } = await open(t)
    const first = await backend.addCheckpoint(latest => (latest === undefined ? statement(2) : undefined))
    t.same(first, { checkpoint: statement(2), created: true })
    t.same(await backend.addCheckpoint(latest => (latest?.tree_size === 2 ? undefined : statement(9))), { checkpoint: statement(2), created: false }, 'nothing new')
    await backend.addCheckpoint(latest => statement((latest?.tree_size ?? 0) + 3))
    t.same(await backend.latestCheckpoint(), statement(5))
    t.same(await backend.checkpoint(2), statement(2))
    t.equal(await backend.checkpoint(3), undefined)
    t.same(await backend.checkpoints(0, 10), [statement(2), statement(5)])
    t.same(await backend.checkpoints(2, 10), [statement(5)])
    t.same(await backend.checkpoints(0, 1), [statement(2)])
    t.equal(await backend.checkpointCount(), 2)
  })
}
