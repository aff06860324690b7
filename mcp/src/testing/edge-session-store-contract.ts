// The edge-session store contract (edge-session-store.ts EdgeSessionStore), kept by MemoryEdgeSessionStore
// (edge-session-store.test.ts) and the sidecar's SQLite store (both drivers, @gate/sidecar
// stores/store-contracts.test.ts): a record is replaced whole, the replay window keeps the last events
// in order, dropped events and pruned records are gone. There is no PostgreSQL edge-session store.
import type { Test } from 'tap'
import type { EdgeSessionRecord, EdgeSessionStore } from '../edge-session-store.js'

const record = (id: string, extra: Partial<EdgeSessionRecord> = {}): EdgeSessionRecord => ({
  id,
  state: 'ready',
  protocolVersion: '2025-11-25',
  principal: 'token:abc',
  clientInfo: { name: 'agent', version: '1' },
  clientCapabilities: { sampling: {} },
  createdAt: 1000,
  lastActiveAt: 1000,
  ...extra,
})

const message = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } })

/** Runs the contract; `open` gives a fresh, empty store closed by the test's teardown. */
export function testEdgeSessionStoreContract(t: Test, open: (t: Test) => Promise<EdgeSessionStore>): void {
  t.test('edge sessions: a record is stored, replaced whole and listed newest first', async t => {
    const store = await open(t)
    t.equal(await store.get('s1'), undefined)
    await store.put(record('s1'))
    await store.put(record('s2', { createdAt: 2000, lastActiveAt: 2000 }))
    await store.put(record('s1', { state: 'draining', lastActiveAt: 3000 }))
    t.same(await store.get('s1'), record('s1', { state: 'draining', lastActiveAt: 3000 }))
    t.same((await store.list(10)).map(r => r.id), ['s2', 's1'])
    t.same((await store.list(1)).map(r => r.id), ['s2'])
  })

  t.test('edge sessions: the replay window keeps the last events of a session, in order', async t => {
    const store = await open(t)
    await store.put(record('s'))
    for (let n = 1; n <= 3; n++) await store.appendEvents([{ sessionId: 's', sequence: n, streamId: n % 2 === 0 ? 'get' : 'post', message: message(n) }], 3)
    // several in one call (one transaction), the window counted from the last of them
    await store.appendEvents([4, 5].map(n => ({ sessionId: 's', sequence: n, streamId: n % 2 === 0 ? 'get' : 'post', message: message(n) })), 3)
    t.same(await store.sequenceRange('s'), { first: 3, last: 5 })
    t.same((await store.eventsAfter('s', 3)).map(e => [e.sequence, e.streamId, e.message]), [[4, 'get', message(4)], [5, 'post', message(5)]])
    t.same(await store.sequenceRange('other'), { first: 0, last: 0 })
    t.same(await store.eventsAfter('other', 0), [])
    await store.dropEvents('s')
    t.same(await store.sequenceRange('s'), { first: 0, last: 0 })
    t.ok(await store.get('s'), 'dropping the events keeps the record')
  })

  t.test('edge sessions: prune forgets records idle before the time, with their events', async t => {
    const store = await open(t)
    await store.put(record('old', { state: 'expired', lastActiveAt: 10 }))
    await store.put(record('new', { lastActiveAt: 5000 }))
    await store.appendEvents([{ sessionId: 'old', sequence: 1, streamId: 'a', message: message(1) }], 10)
    t.equal(await store.prune(1000), 1)
    t.equal(await store.get('old'), undefined)
    t.same(await store.eventsAfter('old', 0), [])
    t.ok(await store.get('new'))
    t.equal(await store.prune(1000), 0)
  })
}
