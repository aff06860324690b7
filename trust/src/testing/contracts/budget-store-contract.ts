// The budget store contract (store-ports.ts TrustBudgetStore), kept by the SQLite budget store
// (@gate/sidecar) and PgBudgetStore, run on handles that share one store (two connections to one file,
// two nodes on one database): captures are all or none, never pass a maximum or a cost cap across
// handles, and are reported by usage and the grant list. Plans come from @gate/sdk's planCaptures over
// real tokens: the siblings of issue 37, children a delegatee signed under one link, each with an id of
// its own. Captures by id (a fleet's sidecar names each one): a retry counts once, a cancel gives a
// capture back or, arriving first, refuses it, and a capture past its deadline counts nothing, alone or
// among many.
import type { Test } from 'tap'
import { authorizeCall, delegationLinkId, planCaptures, type CapabilityToken, type CapturePlan, type MonetaryAmount, type ToolCall, type ToolGrant } from '@gate/sdk'
import { exampleSigner, siblingChildren } from '@gate/sdk/testing'
import type { TrustBudgetStore } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const NOW = 1_763_700_000
const CALL: ToolCall = { server_id: 'http', tool_name: 'POST /pets', arguments: {} }

/** `count` siblings under one link delegating `grant`, the link's counter owner, and each sibling's plan for one call. */
function siblingPlans(grant: ToolGrant, count: number, cost?: MonetaryAmount, seed = 61): { owner: string; plans: CapturePlan[] } {
  const siblings = siblingChildren({
    authority: exampleSigner('ed25519', seed),
    delegatee: exampleSigner('ed25519', seed + 1),
    capabilityId: `cap-root-${seed}`,
    delegated: { scope: { grants: [grant] }, expires_at: NOW + 600 },
    subject: exampleSigner('ed25519', seed + 2).publicKey,
    now: NOW,
    count,
    id: n => `cap-${seed}-sibling-${n}`,
  })
  const plans = siblings.map((child: CapabilityToken) => {
    const matched = authorizeCall(child, cost === undefined ? CALL : { ...CALL, cost })
    if (!matched.ok) throw new Error(matched.reason)
    return planCaptures(child, matched, cost)
  })
  return { owner: `link:${delegationLinkId(siblings[0]!.delegation_chain![0]!)}`, plans }
}

/** Runs the contract; `open` gives two handles on one fresh store (closed by the caller's teardown). */
export function testBudgetStoreContract(t: Test, open: OpenStore<[TrustBudgetStore, TrustBudgetStore]>): void {
  t.test('siblings of one link, captured at once through both handles, spend its max_invocations once in all', async t => {
    const [a, b] = await open(t)
    const { owner, plans } = siblingPlans({ server_id: 'http', tool_name: 'POST /pets', max_invocations: 3 }, 24)
    const results = await Promise.all(plans.map((plan, i) => (i % 2 === 0 ? a : b).capture(plan)))
    t.equal(results.filter(r => r.allowed).length, 3, "exactly the link's three, across 24 siblings")
    for (const r of results) if (!r.allowed) t.match(r.failed, { kind: 'invocation', index: 1 }, "refused by the link's counter, the second of each plan")
    t.match(await a.usage(owner), { grants: [{ grantKey: 'link:0:POST /pets', used: 3, maxInvocations: 3 }] })
    const spentOwn = await Promise.all(plans.map(p => b.usage(p.invocations[0]!.owner)))
    t.equal(spentOwn.filter(u => u.grants.length > 0).length, 3, "a refused sibling's own counter is untouched (all or none)")
  })

  t.test("siblings of one link charge its max_total_cost once in all; a refused cost adds to no total", async t => {
    const [a, b] = await open(t)
    const cost = { units: 30, currency: 'USD' }
    const grant: ToolGrant = { server_id: 'http', tool_name: 'POST /pets', max_total_cost: { units: 100, currency: 'USD' } }
    const { owner, plans } = siblingPlans(grant, 10, cost, 71)
    const results = await Promise.all(plans.map((plan, i) => (i % 2 === 0 ? a : b).capture(plan)))
    t.equal(results.filter(r => r.allowed).length, 3, '3 × 30 fits 100, a fourth does not')
    for (const r of results) if (!r.allowed) t.match(r.failed, { kind: 'cost', index: 1, units: 90 })
    t.match(await b.usage(owner), { costs: [{ grantKey: 'link:0:POST /pets', currency: 'USD', units: 90 }] })
    const charged = await Promise.all(plans.map(p => a.usage(p.costs[0]!.owner)))
    t.same(charged.map(u => u.costs.reduce((n, c) => n + c.units, 0)).sort((x, y) => y - x), [30, 30, 30, 0, 0, 0, 0, 0, 0, 0], "each sibling's own total holds only what was charged")
    const allowed = results.find(r => r.allowed)
    t.match(allowed, { costUnits: [30] }, "the sibling's own total first, then the link's")
  })

  t.test('an exhausted cost total refuses the whole capture: no counter advances, no other total grows', async t => {
    const [a] = await open(t)
    const counter = { owner: 'cap-x', key: '0:POST /pets', max: 5, fixedMax: false, kind: 'grant' as const }
    const open1 = { owner: 'cap-x', key: '0:POST /pets', units: 10, currency: 'EUR', maxUnits: 100 }
    const full = { owner: 'link:full', key: 'link:0:POST /pets', units: 10, currency: 'EUR', maxUnits: 5, link: 0 }
    t.same(await a.capture({ invocations: [counter], costs: [open1, full] }), { allowed: false, failed: { kind: 'cost', index: 1, units: 0 } })
    t.same(await a.usage('cap-x'), { capabilityId: 'cap-x', grants: [], costs: [] }, 'nothing left behind')
    t.same(await a.capture({ invocations: [counter], costs: [open1, { ...full, maxUnits: 10 }] }), { allowed: true, used: [1], costUnits: [10, 10] })
  })

  t.test('a plan naming one counter or cost total twice is refused before anything is read', async t => {
    const [a] = await open(t)
    const counter = { owner: 'cap-y', key: 'k', max: 5, fixedMax: false, kind: 'grant' as const }
    await t.rejects(a.capture({ invocations: [counter, { ...counter, max: 9 }], costs: [] }), { code: 'gate_bad_request' })
    const cost = { owner: 'cap-y', key: 'k', units: 1, currency: 'USD', maxUnits: 5 }
    await t.rejects(a.capture({ invocations: [], costs: [cost, cost] }), { code: 'gate_bad_request' })
    t.same(await a.usage('cap-y'), { capabilityId: 'cap-y', grants: [], costs: [] })
  })

  t.test('a capture id names one capture: a retry through either handle answers the first result and counts once', async t => {
    const [a, b] = await open(t)
    const counter = { owner: 'cap-id-1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant' as const }
    const cost = { owner: 'cap-id-1', key: '0:POST /pets', units: 7, currency: 'USD', maxUnits: 100 }
    const plan = { invocations: [counter], costs: [cost] }
    const first = await a.capture(plan, { captureId: 'req-1' })
    t.same(first, { allowed: true, used: [1], costUnits: [7] })
    t.same(await b.capture(plan, { captureId: 'req-1' }), first, 'the retry answers the same result')
    t.same(await Promise.all([a.capture(plan, { captureId: 'req-2' }), b.capture(plan, { captureId: 'req-2' })]), [
      { allowed: true, used: [2], costUnits: [14] },
      { allowed: true, used: [2], costUnits: [14] },
    ], 'two copies at once: one capture')
    t.match(await a.usage('cap-id-1'), { grants: [{ used: 2 }], costs: [{ units: 14 }] })
    t.same(await a.capture(plan), { allowed: true, used: [3], costUnits: [21] }, 'a capture without an id counts as before')
  })

  t.test('a cancel gives a counted capture back (counters and costs) and is idempotent', async t => {
    const [a, b] = await open(t)
    const counter = { owner: 'cap-id-2', key: '0:POST /pets', max: 2, fixedMax: false, kind: 'grant' as const }
    const family = { owner: 'family:id-2', key: 'family', max: 5, fixedMax: true, kind: 'family' as const }
    const cost = { owner: 'cap-id-2', key: '0:POST /pets', units: 40, currency: 'EUR', maxUnits: 50 }
    const plan = { invocations: [counter, family], costs: [cost] }
    t.match(await a.capture(plan, { captureId: 'req-3' }), { allowed: true, used: [1, 1] })
    t.match(await a.capture({ invocations: [counter, family], costs: [cost] }, { captureId: 'req-4' }), { allowed: false, failed: { kind: 'cost', index: 0, units: 40 } })
    t.same(await b.cancel('req-3'), { captureId: 'req-3', reversed: true })
    t.match(await a.usage('cap-id-2'), { grants: [{ used: 0 }], costs: [{ units: 0 }] })
    t.match(await a.usage('family:id-2'), { grants: [{ used: 0 }] })
    t.same(await a.cancel('req-3'), { captureId: 'req-3', reversed: false }, 'a second cancel changes nothing')
    t.match(await a.usage('cap-id-2'), { grants: [{ used: 0 }] })
    await t.rejects(b.capture(plan, { captureId: 'req-3' }), { code: 'gate_conflict' }, 'the cancelled id does not capture again')
    t.match(await a.capture(plan, { captureId: 'req-5' }), { allowed: true, used: [1, 1], costUnits: [40] }, 'what was given back is spendable')
  })

  t.test('a cancel that arrives before its capture refuses the capture: nothing is counted', async t => {
    const [a, b] = await open(t)
    const counter = { owner: 'cap-id-3', key: '0:POST /pets', max: 5, fixedMax: false, kind: 'grant' as const }
    t.same(await a.cancel('req-6'), { captureId: 'req-6', reversed: false })
    await t.rejects(b.capture({ invocations: [counter], costs: [] }, { captureId: 'req-6' }), { code: 'gate_conflict', message: /req-6 was cancelled/ })
    t.same(await a.usage('cap-id-3'), { capabilityId: 'cap-id-3', grants: [], costs: [] })
    await t.rejects(a.cancel(''), { code: 'gate_bad_request' })
    await t.rejects(a.capture({ invocations: [counter], costs: [] }, { captureId: 'a b' }), { code: 'gate_bad_request' })
  })

  t.test('a capture whose deadline has passed counts nothing (503)', async t => {
    const [a] = await open(t)
    const counter = { owner: 'cap-id-4', key: '0:POST /pets', max: 5, fixedMax: false, kind: 'grant' as const }
    await t.rejects(a.capture({ invocations: [counter], costs: [] }, { captureId: 'req-7', deadlineAt: performance.now() - 1 }), { code: 'gate_store_unavailable', message: /deadline/ })
    t.same(await a.usage('cap-id-4'), { capabilityId: 'cap-id-4', grants: [], costs: [] })
    t.match(await a.capture({ invocations: [counter], costs: [] }, { captureId: 'req-7', deadlineAt: performance.now() + 60_000 }), { allowed: true, used: [1] }, 'the id was not used up')
  })

  t.test('captures with deadlines, 40 at once through both handles, spend the maximum exactly; one already late counts nothing', async t => {
    const [a, b] = await open(t)
    const counter = { owner: 'cap-id-5', key: '0:POST /pets', max: 20, fixedMax: false, kind: 'grant' as const }
    // sent together, they share transactions (SQLite's group commit) or queue on the row (PostgreSQL)
    const settled = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).capture({ invocations: [counter], costs: [] }, { captureId: `req-8-${i}`, deadlineAt: performance.now() + (i === 7 ? -1 : 60_000) })),
    )
    t.match(settled[7], { status: 'rejected', reason: { code: 'gate_store_unavailable' } }, 'the late one answers 503')
    t.equal(settled.filter(r => r.status === 'fulfilled' && r.value.allowed).length, 20, 'the others spend max_invocations, no more')
    t.match(await a.usage('cap-id-5'), { grants: [{ used: 20 }] })
  })

  t.test('a counter refuses the call past its maximum, or a fixed maximum presented otherwise; usage reports both kinds', async t => {
    const [a, b] = await open(t)
    const counter = { owner: 'cap-z', key: '0:GET /pets', max: 2, fixedMax: false, kind: 'grant' as const }
    const cost = { owner: 'cap-z', key: '0:GET /pets', units: 15, currency: 'EUR', maxUnits: 100 }
    t.same(await a.capture({ invocations: [counter], costs: [cost] }), { allowed: true, used: [1], costUnits: [15] })
    t.same(await b.capture({ invocations: [counter], costs: [] }), { allowed: true, used: [2], costUnits: [] })
    t.same(await a.capture({ invocations: [counter], costs: [cost] }), { allowed: false, failed: { kind: 'invocation', index: 0, used: 2 } })
    const family = { owner: 'family:f1', key: 'family', max: 5, fixedMax: true, kind: 'family' as const }
    t.same(await b.capture({ invocations: [family], costs: [] }), { allowed: true, used: [1], costUnits: [] })
    t.same(await a.capture({ invocations: [{ ...family, max: 6 }], costs: [] }), { allowed: false, failed: { kind: 'max_mismatch', index: 0, recordedMax: 5 } })
    t.match(await b.usage('cap-z'), {
      capabilityId: 'cap-z',
      grants: [{ capabilityId: 'cap-z', grantKey: '0:GET /pets', used: 2, maxInvocations: 2 }],
      costs: [{ capabilityId: 'cap-z', grantKey: '0:GET /pets', currency: 'EUR', units: 15 }],
    })
    const listed = await a.listGrants(10)
    t.same(listed.map(g => g.capabilityId).sort(), ['cap-z', 'family:f1'])
    t.ok(listed.every(g => Number.isSafeInteger(g.updatedAt)), 'each with its last update')
    t.equal((await a.listGrants(1)).length, 1)
  })
}
