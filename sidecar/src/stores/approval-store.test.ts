// The approval store: answered once while pending, consumed once by the exact request it approves.
import t from 'tap'
import { join } from 'node:path'
import type { NewApproval, RequestBindings } from '@gate/trust'
import { openApprovalStore } from './approval-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const NOW = 1_700_000_000

const bindings: RequestBindings = { callerIdentityHash: 'a'.repeat(64), method: 'DELETE', routePattern: '/pets/{id}', contentHash: 'c'.repeat(64) }

function approval(id: string, overrides: Partial<NewApproval> = {}): NewApproval {
  return { approvalId: id, requestId: `req-${id}`, ...bindings, decisionReceiptId: 'd'.repeat(64), createdAt: NOW, expiresAt: NOW + 600, ...overrides }
}

t.test('create, get and listPending', async t => {
  const store = await openApprovalStore(join(t.testdir(), 'approvals.db'), { driver })
  t.teardown(() => store.close())
  const created = await store.create(approval('ap-1'))
  t.match(created, { approvalId: 'ap-1', state: 'pending', responder: null, consumedAt: null })
  t.same(await store.get('ap-1'), created)
  await store.create(approval('ap-2', { createdAt: NOW + 1, expiresAt: NOW + 5 }))
  t.same((await store.listPending(NOW + 2)).map(a => a.approvalId), ['ap-1', 'ap-2'])
  t.same((await store.listPending(NOW + 5)).map(a => a.approvalId), ['ap-1'], 'expired ones are not pending')
  t.equal(await store.get('nope'), undefined)
  await t.rejects(store.create(approval('ap-1')), { code: 'gate_conflict', name: 'DuplicateRecordError', message: /approvals record "ap-1" already exists/ })
})

t.test('respond answers a pending approval once; a second answer is gate_conflict', async t => {
  const store = await openApprovalStore(join(t.testdir(), 'approvals.db'), { driver, now: () => NOW + 10 })
  t.teardown(() => store.close())
  await store.create(approval('ap-1'))
  const approved = await store.respond('ap-1', 'approve', { responder: 'alice', reason: 'looks fine' })
  t.match(approved, { state: 'approved', responder: 'alice', reason: 'looks fine', respondedAt: NOW + 10 })
  await t.rejects(store.respond('ap-1', 'deny'), { code: 'gate_conflict', name: 'ApprovalStateError', state: 'approved', message: /not pending: it is approved/ })
  await store.create(approval('ap-2'))
  t.match(await store.respond('ap-2', 'deny'), { state: 'denied', responder: null })
  await t.rejects(store.respond('ap-2', 'approve'), { code: 'gate_conflict', state: 'denied' })
  await t.rejects(store.respond('missing', 'approve'), { code: 'gate_not_found', status: 404, state: 'unknown' })
  await store.create(approval('ap-3', { expiresAt: NOW + 5 }))
  await t.rejects(store.respond('ap-3', 'approve'), { code: 'gate_conflict', state: 'expired' })
  await t.rejects(store.respond('ap-3', 'maybe' as never), { code: 'gate_bad_request' })
})

t.test('of concurrent answers exactly one wins', async t => {
  const store = await openApprovalStore(join(t.testdir(), 'approvals.db'), { driver, now: () => NOW })
  t.teardown(() => store.close())
  await store.create(approval('ap-1'))
  const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.respond('ap-1', i % 2 === 0 ? 'approve' : 'deny')))
  t.equal(settled.filter(s => s.status === 'fulfilled').length, 1)
})

t.test('an approved request is consumed exactly once, only with matching bindings and before expiry', async t => {
  const path = join(t.testdir(), 'approvals.db')
  const store = await openApprovalStore(path, { driver, now: () => NOW })
  await store.create(approval('ap-1'))
  t.equal(await store.consume('ap-1', bindings, NOW), false, 'still pending')
  await store.respond('ap-1', 'approve')
  for (const wrong of [
    { ...bindings, callerIdentityHash: 'b'.repeat(64) },
    { ...bindings, method: 'POST' },
    { ...bindings, routePattern: '/pets' },
    { ...bindings, contentHash: 'e'.repeat(64) },
  ]) {
    t.equal(await store.consume('ap-1', wrong, NOW), false, 'a mismatched binding does not consume')
  }
  t.equal(await store.consume('ap-1', bindings, NOW + 600), false, 'expired')
  const racing = await Promise.all(Array.from({ length: 10 }, () => store.consume('ap-1', bindings, NOW + 1)))
  t.equal(racing.filter(Boolean).length, 1, 'one of ten racing consumers wins')
  t.equal((await store.get('ap-1'))?.consumedAt, NOW + 1)
  await store.close()
  const reopened = await openApprovalStore(path, { driver })
  t.teardown(() => reopened.close())
  t.equal(await reopened.consume('ap-1', bindings, NOW + 2), false, 'still consumed after reopen')
  await reopened.create(approval('ap-denied'))
  await reopened.respond('ap-denied', 'deny', { now: NOW })
  t.equal(await reopened.consume('ap-denied', bindings, NOW), false, 'a denied approval is never consumed')
})

t.test('bad approvals are refused with gate_bad_request', async t => {
  const store = await openApprovalStore(':memory:', { driver })
  t.teardown(() => store.close())
  await t.rejects(store.create(approval('')), { code: 'gate_bad_request', message: /approvalId/ })
  await t.rejects(store.create(approval('x', { expiresAt: -1 })), { code: 'gate_bad_request', message: /expiresAt/ })
})
