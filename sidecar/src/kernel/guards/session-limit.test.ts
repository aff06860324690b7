// The session limit guard on the SessionContext it is handed: a call past --max-session-calls or a
// capability delegated deeper than --max-delegation-depth is denied with its reason code; a call within
// both passes with evidence; an HTTP request (no session) passes; no limit set: the guard is off.
import t from 'tap'
import { ANONYMOUS_CALLER, type SessionContext } from '@gate/sdk'
import type { GuardContext } from './guard.js'
import { SessionLimitGuard } from './session-limit.js'

const session = (request_count: number, delegation_depth: number): SessionContext => ({ session_id: 'mcp_1', caller: ANONYMOUS_CALLER, created_at: 0, expires_at: null, request_count, bytes_read: 0, bytes_written: 0, delegation_depth, metadata: null })
const ctx = (s: SessionContext | undefined) => ({ session: s }) as unknown as GuardContext

t.test('past the call limit: denied 429 session_call_limit; at it: passed', async t => {
  const guard = new SessionLimitGuard({ maxCalls: 2, maxDelegationDepth: undefined })
  t.equal(guard.enabled, true)
  t.match(guard.check(ctx(session(2, 0))), { pass: true, evidence: { guard_name: 'SessionLimitGuard', verdict: true, details: 'session call 2 of 2, delegation depth 0' } })
  t.match(guard.check(ctx(session(3, 0))), {
    pass: false,
    verdict: { verdict: 'deny', guard: 'SessionLimitGuard', http_status: 429, reason: 'session mcp_1 reached its limit of 2 tool calls (this is call 3)', details: { reason_code: 'session_call_limit' } },
  })
})

t.test('a capability delegated deeper than allowed: denied delegation_depth_exceeded', async t => {
  const guard = new SessionLimitGuard({ maxCalls: undefined, maxDelegationDepth: 1 })
  t.match(guard.check(ctx(session(1, 1))), { pass: true })
  t.match(guard.check(ctx(session(1, 2))), { pass: false, verdict: { http_status: 403, reason: 'the capability presented is delegated 2 times, more than the 1 allowed', details: { reason_code: 'delegation_depth_exceeded' } } })
  t.match(new SessionLimitGuard({ maxCalls: undefined, maxDelegationDepth: 0 }).check(ctx(session(1, 1))), { pass: false }, '0: direct grants only')
})

t.test('no session (an HTTP request) passes; no limit: off', async t => {
  t.same(new SessionLimitGuard({ maxCalls: 1, maxDelegationDepth: 0 }).check(ctx(undefined)), { pass: true })
  t.equal(new SessionLimitGuard({ maxCalls: undefined, maxDelegationDepth: undefined }).enabled, false)
})
