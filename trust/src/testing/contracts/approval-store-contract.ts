// The approval contract (store-ports.ts ApprovalStorePort), kept by the SQLite approval store
// (@gate/sidecar) and PgApprovalStore: an approval is answered once, only while pending and unexpired,
// and an approved one is consumed once, only by the same request.
import type { Test } from 'tap'
import type { ApprovalStorePort, NewApproval, RequestBindings } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const T = 1_700_000_000
const bindings: RequestBindings = { callerIdentityHash: 'ab'.repeat(32), method: 'POST', routePattern: '/pets', contentHash: 'cd'.repeat(32) }
const approval = (id: string, extra: Partial<NewApproval> = {}): NewApproval => ({ approvalId: id, requestId: `req-${id}`, createdAt: T, expiresAt: T + 600, ...bindings, ...extra })

export function testApprovalStoreContract(t: Test, open: OpenStore<ApprovalStorePort>): void {
  t.test('approvals: created pending, listed until answered or expired, answered once', async t => {
    const store = await open(t)
    t.match(await store.create(approval('a1', { decisionReceiptId: 'ef'.repeat(32) })), { approvalId: 'a1', state: 'pending', decisionReceiptId: 'ef'.repeat(32), respondedAt: null, consumedAt: null })
    await store.create(approval('a2', { createdAt: T + 1 }))
    await store.create(approval('a3', { createdAt: T + 2, expiresAt: T + 5 }))
    await t.rejects(store.create(approval('a1')), { code: 'gate_conflict' }, 'a taken id')
    t.same((await store.listPending(T + 1)).map(a => a.approvalId), ['a1', 'a2', 'a3'], 'oldest first')
    t.same((await store.listPending(T + 5)).map(a => a.approvalId), ['a1', 'a2'], 'an expired one is no longer pending')
    t.match(await store.respond('a1', 'approve', { responder: 'ops', reason: 'ok', now: T + 10 }), { state: 'approved', responder: 'ops', reason: 'ok', respondedAt: T + 10 })
    await t.rejects(store.respond('a1', 'deny', { now: T + 11 }), { code: 'gate_conflict' }, 'answered once')
    await t.rejects(store.respond('a3', 'approve', { now: T + 20 }), { code: 'gate_conflict' }, 'expired')
    await t.rejects(store.respond('a9', 'approve', { now: T + 20 }), { code: 'gate_not_found' })
    t.match(await store.respond('a2', 'deny', { now: T + 12 }), { state: 'denied', responder: null })
    t.same(await store.listPending(T + 13), [])
    t.match(await store.get('a2'), { state: 'denied', respondedAt: T + 12 })
    t.equal(await store.get('a9'), undefined)
  })

  t.test('approvals: an approved request is consumed once, by the same request, before it expires', async t => {
    const store = await open(t)
    await store.create(approval('b1'))
    await store.create(approval('b2'))
    t.equal(await store.consume('b1', bindings, T + 1), false, 'not approved yet')
    await store.respond('b1', 'approve', { now: T + 1 })
    t.equal(await store.consume('b1', { ...bindings, contentHash: 'ee'.repeat(32) }, T + 2), false, 'another body')
    t.equal(await store.consume('b1', { ...bindings, method: 'PUT' }, T + 2), false, 'another method')
    t.equal(await store.consume('b1', bindings, T + 2), true)
    t.equal(await store.consume('b1', bindings, T + 3), false, 'once')
    t.match(await store.get('b1'), { consumedAt: T + 2 })
    await store.respond('b2', 'approve', { now: T + 1 })
    t.equal(await store.consume('b2', bindings, T + 600), false, 'expired')
    await t.rejects(store.create(approval('', {})), { code: 'gate_bad_request' })
  })
}
