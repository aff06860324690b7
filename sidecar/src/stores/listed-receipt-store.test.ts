// Tool and child receipts in the receipt store's file: idempotent appends, conflicting bytes refused,
// lists newest first.
import t from 'tap'
import { join } from 'node:path'
import { openReceiptStore } from './receipt-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

t.test('tool and child receipts: append (idempotent, conflicting bytes refused) and list newest first', async t => {
  const store = await openReceiptStore(join(t.testdir(), 'receipts.db'), { driver })
  t.teardown(() => store.close())
  t.same(await store.listed.append({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1"}', tenant: 'a', toolName: 'read' }), { seq: 1, stored: true })
  t.same(await store.listed.append({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1"}' }), { seq: 1, stored: false })
  await t.rejects(store.listed.append({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1","x":1}' }), { code: 'gate_conflict' })
  await store.listed.append({ kind: 'tool', receiptId: 'r2', json: '{"id":"r2"}', tenant: 'b' })
  await store.listed.append({ kind: 'child', receiptId: 'r1', json: '{"c":1}', sessionId: 's' })
  t.same((await store.listed.list('tool', {}, 10)).map(r => r.receiptId), ['r1', 'r2'])
  t.same((await store.listed.list('tool', { tenant: 'b' }, 10)).map(r => r.json), ['{"id":"r2"}'])
  t.same((await store.listed.list('tool', {}, 1)).map(r => r.receiptId), ['r2'], 'the newest when limited')
  t.same((await store.listed.list('child', { sessionId: 's', receiptId: 'r1' }, 10)).map(r => r.json), ['{"c":1}'])
})
