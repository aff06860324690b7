// The in-memory edge-session store: the replay window drops the oldest events, ended records are
// capped, and pruning forgets records idle before a time.
import t from 'tap'
import { MemoryEdgeSessionStore, type EdgeSessionRecord } from './edge-session-store.js'

const record = (id: string, state: EdgeSessionRecord['state'] = 'ready', lastActiveAt = 1000): EdgeSessionRecord => ({
  id,
  state,
  protocolVersion: '2025-11-25',
  principal: 'open',
  clientInfo: { name: 'c', version: '1' },
  clientCapabilities: {},
  createdAt: 1000,
  lastActiveAt,
})

t.test('the window keeps the last N events of a session, in order', async t => {
  const store = new MemoryEdgeSessionStore()
  for (let n = 1; n <= 5; n++) await store.appendEvents([{ sessionId: 's', sequence: n, streamId: 'a', message: {} }], 3)
  t.same(await store.sequenceRange('s'), { first: 3, last: 5 })
  t.same((await store.eventsAfter('s', 3)).map(e => e.sequence), [4, 5])
  t.same(await store.sequenceRange('other'), { first: 0, last: 0 })
})

t.test('ended records beyond maxEnded go, oldest first; live ones stay', async t => {
  const store = new MemoryEdgeSessionStore({ maxEnded: 2 })
  await store.put(record('live'))
  for (const id of ['e1', 'e2', 'e3']) await store.put(record(id, 'deleted'))
  t.equal(await store.get('e1'), undefined)
  t.ok(await store.get('e2'))
  t.ok(await store.get('e3'))
  t.ok(await store.get('live'))
})

t.test('prune forgets records idle before the time, with their events', async t => {
  const store = new MemoryEdgeSessionStore()
  await store.put(record('old', 'ready', 10))
  await store.put(record('new', 'ready', 5000))
  await store.appendEvents([{ sessionId: 'old', sequence: 1, streamId: 'a', message: {} }], 10)
  t.equal(await store.prune(1000), 1)
  t.equal(await store.get('old'), undefined)
  t.same(await store.eventsAfter('old', 0), [])
  t.ok(await store.get('new'))
})
