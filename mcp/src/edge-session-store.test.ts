// The in-memory edge-session store: the contract every edge-session store keeps
// (testing/edge-session-store-contract.ts), and its own cap on ended records.
import t from 'tap'
import { MemoryEdgeSessionStore, type EdgeSessionRecord } from './edge-session-store.js'
import { testEdgeSessionStoreContract } from './testing/edge-session-store-contract.js'

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

t.test('the edge-session store contract', async t => testEdgeSessionStoreContract(t, async () => new MemoryEdgeSessionStore()))

t.test('ended records beyond maxEnded go, oldest first; live ones stay', async t => {
  const store = new MemoryEdgeSessionStore({ maxEnded: 2 })
  await store.put(record('live'))
  for (const id of ['e1', 'e2', 'e3']) await store.put(record(id, 'deleted'))
  t.equal(await store.get('e1'), undefined)
  t.ok(await store.get('e2'))
  t.ok(await store.get('e3'))
  t.ok(await store.get('live'))
})
