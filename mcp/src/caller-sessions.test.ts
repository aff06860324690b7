import t from 'tap'
import { CallerSessions } from './caller-sessions.js'
import type { EdgeSessionRecord } from './edge-session-store.js'

const record = (id: string, principal: string, lastActiveAt: number): EdgeSessionRecord => ({
  id,
  state: 'ready',
  protocolVersion: '2025-11-25',
  principal,
  clientInfo: { name: 'x', version: '1' },
  clientCapabilities: {},
  createdAt: 0,
  lastActiveAt,
})

t.test('sessions count per caller, and an ended one frees its place', async t => {
  const callers = new CallerSessions()
  const a1 = record('1', 'token:a', 1000)
  const a2 = record('2', 'token:a', 5000)
  callers.add(a1)
  callers.add(a2)
  callers.add(record('3', 'token:b', 0))
  t.same([callers.count('token:a'), callers.count('token:b'), callers.count('open')], [2, 1, 0])
  callers.remove(a1)
  callers.remove(a1)
  t.equal(callers.count('token:a'), 1, 'removing twice frees one place')
  callers.clear()
  t.equal(callers.count('token:b'), 0)
})

t.test("the wait is until the caller's least recently active session would expire", async t => {
  const callers = new CallerSessions()
  const older = record('1', 'jwt:x', 1000)
  callers.add(older)
  callers.add(record('2', 'jwt:x', 4000))
  t.equal(callers.msToFirstExpiry('jwt:x', 10_000, 2000), 9000)
  older.lastActiveAt = 8000 // a request on it: the records are the live ones
  t.equal(callers.msToFirstExpiry('jwt:x', 10_000, 8000), 6000)
  t.equal(callers.msToFirstExpiry('jwt:none', 10_000, 8000), 10_000, 'no session: one idle period')
})
