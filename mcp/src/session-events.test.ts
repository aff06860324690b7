// A session's event log: ids `{session_id}-{sequence}` counting up, replay of one stream after an id,
// and refusal of ids of another session, never issued, or out of the window.
import t from 'tap'
import { MemoryEdgeSessionStore } from './edge-session-store.js'
import { EventWriter } from './event-writer.js'
import { SessionEvents } from './session-events.js'

const message = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } })

t.test('ids are {session_id}-{sequence}; a replay sends the later events of the same stream only', async t => {
  const store = new MemoryEdgeSessionStore()
  const events = await SessionEvents.open('s1', store, new EventWriter(store, 100, () => {}), 100)
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
  const writer = new EventWriter(store, 100, () => {})
  const first = await SessionEvents.open('s1', store, writer, 100)
  await first.storeEvent('get', message(1))
  await first.storeEvent('get', message(2))
  await writer.flush()
  const resumed = await SessionEvents.open('s1', store, new EventWriter(store, 100, () => {}), 100)
  t.equal(await resumed.storeEvent('get', message(3)), 's1-3')
})

t.test('refusals: another session, never issued, outside the window', async t => {
  const store = new MemoryEdgeSessionStore()
  const events = await SessionEvents.open('s1', store, new EventWriter(store, 2, () => {}), 2)
  for (let n = 1; n <= 5; n++) await events.storeEvent('get', message(n))
  t.equal(await events.refusal('s2-4'), 'foreign')
  t.equal(await events.refusal('s1-x'), 'foreign')
  t.equal(await events.refusal('s1-9'), 'outside_window')
  t.equal(await events.refusal('s1-2'), 'outside_window', 'event 3 left the window')
  t.equal(await events.refusal('s1-3'), undefined, 'events 4 and 5 are retained')
  t.equal(await events.refusal('s1-5'), undefined, 'nothing missed')
})

t.test('events reach the store in one batch behind the answers; a replay older than memory reads the store', async t => {
  const store = new MemoryEdgeSessionStore()
  const writer = new EventWriter(store, 1000, () => {})
  const events = await SessionEvents.open('s1', store, writer, 1000)
  for (let n = 1; n <= 100; n++) await events.storeEvent('get', message(n))
  t.same(await store.sequenceRange('s1'), { first: 0, last: 0 }, 'not written yet')
  const sent: string[] = []
  await events.replayEventsAfter('s1-10', { send: async id => void sent.push(id) })
  t.equal(sent.length, 90, 'the replay found the events memory no longer holds')
  t.same(await store.sequenceRange('s1'), { first: 1, last: 100 }, 'written in one flush')
})
