// A session's event log: ids `{session_id}-{sequence}` counting up, replay of one stream after an id,
// and refusal of ids of another session, never issued, or out of the window.
import t from 'tap'
import { MemoryEdgeSessionStore } from './edge-session-store.js'
import { SessionEvents } from './session-events.js'

const message = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } })

t.test('ids are {session_id}-{sequence}; a replay sends the later events of the same stream only', async t => {
  const store = new MemoryEdgeSessionStore()
  const events = await SessionEvents.open('s1', store, 100)
  const primer = await events.storeEvent('post-a', {} as never)
  const a1 = await events.storeEvent('post-a', message(1))
  t.same([primer, a1], ['s1-1', 's1-2'])
  await events.storeEvent('get', message(2))
  await events.storeEvent('post-a', message(3))
  const sent: [string, unknown][] = []
  const stream = await events.replayEventsAfter(primer, { send: async (id, m) => void sent.push([id, m]) })
  t.equal(stream, 'post-a')
  t.same(sent, [['s1-2', message(1)], ['s1-4', message(3)]], 'the GET stream event and the empty priming event are not replayed')
  t.equal(await events.getStreamIdForEventId('s1-3'), 'get')
})

t.test('a resumed log goes on after the stored sequence', async t => {
  const store = new MemoryEdgeSessionStore()
  const first = await SessionEvents.open('s1', store, 100)
  await first.storeEvent('get', message(1))
  await first.storeEvent('get', message(2))
  const resumed = await SessionEvents.open('s1', store, 100)
  t.equal(await resumed.storeEvent('get', message(3)), 's1-3')
})

t.test('refusals: another session, never issued, outside the window', async t => {
  const store = new MemoryEdgeSessionStore()
  const events = await SessionEvents.open('s1', store, 2)
  for (let n = 1; n <= 5; n++) await events.storeEvent('get', message(n))
  t.equal(await events.refusal('s2-4'), 'foreign')
  t.equal(await events.refusal('s1-x'), 'foreign')
  t.equal(await events.refusal('s1-9'), 'outside_window')
  t.equal(await events.refusal('s1-2'), 'outside_window', 'event 3 left the window')
  t.equal(await events.refusal('s1-3'), undefined, 'events 4 and 5 are retained')
  t.equal(await events.refusal('s1-5'), undefined, 'nothing missed')
})
