// The SQLite edge-session store in t.testdir(): records and events survive a reopen (a restarted edge),
// the window drops the oldest events, pruning forgets idle records, and the file is stamped as its own
// store beside the receipt store.
import t from 'tap'
import { join } from 'node:path'
import type { EdgeSessionRecord } from '@gate/mcp'
import { edgeSessionPathBeside, openEdgeSessionStore } from './edge-session-store.js'
import { openStoreDatabase } from './revision-stamp.js'
import { NONCE_SCHEMA } from './nonce-store.js'

const record = (id: string, lastActiveAt = 1000): EdgeSessionRecord => ({
  id,
  state: 'ready',
  protocolVersion: '2025-11-25',
  principal: 'token:abc',
  clientInfo: { name: 'agent', version: '1' },
  clientCapabilities: { sampling: {} },
  createdAt: 1000,
  lastActiveAt,
})

t.test('the path sits beside the receipt store; in memory stays in memory', async t => {
  t.equal(edgeSessionPathBeside('/x/receipts.db'), '/x/receipts.edge_sessions.db')
  t.equal(edgeSessionPathBeside('/x/receipts'), '/x/receipts.edge_sessions.db')
  t.equal(edgeSessionPathBeside(':memory:'), ':memory:')
})

t.test('records and events survive a reopen; the window and pruning bound them', async t => {
  const path = join(t.testdir(), 'receipts.edge_sessions.db')
  const store = await openEdgeSessionStore(path)
  await store.put(record('s1'))
  await store.put({ ...record('s1'), state: 'expired', lastActiveAt: 2000 })
  await store.put(record('s2', 5000))
  for (let n = 1; n <= 4; n++) await store.appendEvents([{ sessionId: 's2', sequence: n, streamId: n % 2 === 0 ? 'get' : 'post', message: { jsonrpc: '2.0', method: 'notifications/message', params: { n } } }], 3)
  await store.close()
  const reopened = await openEdgeSessionStore(path)
  t.teardown(() => reopened.close())
  t.same(await reopened.get('s1'), { ...record('s1'), state: 'expired', lastActiveAt: 2000 }, 'a put updates state and activity')
  t.same(await reopened.sequenceRange('s2'), { first: 2, last: 4 })
  t.same((await reopened.eventsAfter('s2', 2)).map(e => [e.sequence, e.streamId]), [[3, 'post'], [4, 'get']])
  t.same((await reopened.list(10)).map(r => r.id).sort(), ['s1', 's2'])
  t.equal(await reopened.prune(3000), 1)
  t.equal(await reopened.get('s1'), undefined)
  await reopened.dropEvents('s2')
  t.same(await reopened.sequenceRange('s2'), { first: 0, last: 0 })
})

t.test("another store's file is refused", async t => {
  const path = join(t.testdir(), 'nonces.db')
  await (await openStoreDatabase(NONCE_SCHEMA, path)).close()
  await t.rejects(openEdgeSessionStore(path), { name: 'StoreRevisionError' })
})
