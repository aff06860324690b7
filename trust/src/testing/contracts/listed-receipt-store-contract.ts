// The listed receipt contract (store-ports.ts ListedReceiptStorePort: tool and child receipts), kept by
// the SQLite receipt store's table (@gate/sidecar) and PgListedReceiptStore: stored as sent, idempotent
// for the same bytes, refused for other bytes under a stored id, listed newest `limit` in seq order.
import type { Test } from 'tap'
import type { ListedReceiptInput } from '../../ports.js'
import type { ListedReceiptStorePort } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const tool = (n: number, extra: Partial<ListedReceiptInput> = {}): ListedReceiptInput => ({
  kind: 'tool',
  receiptId: `tool-${n}`,
  json: JSON.stringify({ id: `tool-${n}`, n }),
  timestamp: 1_700_000_000 + n,
  tenant: n % 2 === 0 ? 'acme' : 'beta',
  toolServer: 'files',
  toolName: n < 3 ? 'read_file' : 'write_file',
  sessionId: 'session-1',
  ...extra,
})

export function testListedReceiptStoreContract(t: Test, open: OpenStore<{ listed: ListedReceiptStorePort }>): void {
  t.test('listed receipts: stored as sent, once; the same id with other bytes is a conflict', async t => {
    const { listed } = await open(t)
    const first = await listed.append(tool(1))
    t.equal(first.stored, true)
    t.same(await listed.append(tool(1)), { seq: first.seq, stored: false }, 'the same bytes again answer the stored seq')
    await t.rejects(listed.append(tool(1, { json: '{"id":"tool-1","n":"changed"}' })), { code: 'gate_conflict' })
    const child = await listed.append({ kind: 'child', receiptId: 'tool-1', json: '{"child":1}', parentRequestId: 'req-1' })
    t.equal(child.stored, true, 'ids are per kind')
    t.same(await listed.list('tool', {}, 10), [{ seq: first.seq, receiptId: 'tool-1', json: tool(1).json }])
    t.same((await listed.list('child', { parentRequestId: 'req-1' }, 10)).map(r => r.json), ['{"child":1}'])
  })

  t.test('listed receipts: exact filters and time bounds combine; the newest `limit`, in seq order', async t => {
    const { listed } = await open(t)
    for (let n = 1; n <= 6; n++) await listed.append(tool(n))
    const ids = async (filter: Parameters<ListedReceiptStorePort['list']>[1], limit = 100) => (await listed.list('tool', filter, limit)).map(r => r.receiptId)
    t.same(await ids({}), ['tool-1', 'tool-2', 'tool-3', 'tool-4', 'tool-5', 'tool-6'])
    t.same(await ids({}, 2), ['tool-5', 'tool-6'])
    t.same(await ids({ tenant: 'acme' }), ['tool-2', 'tool-4', 'tool-6'])
    t.same(await ids({ toolName: 'read_file', tenant: 'beta' }), ['tool-1'])
    t.same(await ids({ since: 1_700_000_002, until: 1_700_000_004 }), ['tool-2', 'tool-3', 'tool-4'])
    t.same(await ids({ receiptId: 'tool-5' }), ['tool-5'])
    t.same(await ids({ sessionId: 'session-2' }), [])
    await t.rejects(listed.list('tool', {}, 0), { code: 'gate_bad_request' })
    // the receipts of one chain: a top-level chainId, not the same text in another member
    await listed.append({ kind: 'child', receiptId: 'child-1', json: JSON.stringify({ id: 'child-1', chainId: 'chain-a' }), sessionId: 'session-1' })
    await listed.append({ kind: 'child', receiptId: 'child-2', json: JSON.stringify({ id: 'child-2', metadata: { chainId: 'chain-a' } }), sessionId: 'session-1' })
    await listed.append({ kind: 'child', receiptId: 'child-3', json: JSON.stringify({ id: 'child-3', chainId: 'chain-b' }), sessionId: 'session-1' })
    t.same((await listed.list('child', { chainId: 'chain-a' }, 10)).map(r => r.receiptId), ['child-1'])
    t.same((await listed.list('child', { chainId: 'chain-a', sessionId: 'session-2' }, 10)).map(r => r.receiptId), [])
    await t.rejects(listed.append(tool(9, { json: '' })), { code: 'gate_bad_request' })
  })
}
