// The budget guard through the kernel: invocation counters (grant, aggregate, delegation family,
// budget share) captured all or none, cost ceilings, and the charged cost on the receipt; and the
// same limits of every delegation link, shared by all the link's descendants.
import t from 'tap'
import { signCapability, signDelegationLink, type CapabilityToken, type DelegationLink, type MonetaryAmount, type Signer, type ToolGrant } from '@gate/sdk'
import { exampleSigner } from '@gate/sdk/testing'
import { KERNEL_AUTHORITY, KERNEL_NOW, kernelRequest, kernelToken, setupKernel } from '../../testing/kernel-setup.js'
import { encodeCapabilityToken } from '../capability-token.js'

const ALL = [{ server_id: 'http', tool_name: '*' }]

function run(kernel: ReturnType<typeof setupKernel>['kernel'], token: CapabilityToken, cost?: MonetaryAmount, path = '/pets', method: 'POST' | 'PATCH' | 'GET' = 'POST') {
  const extra = cost === undefined ? {} : { governed_intent: { max_amount: cost } }
  return kernel.evaluate({ request: kernelRequest(method, path, extra), capabilityHeader: encodeCapabilityToken(token) })
}

t.test('aggregate budget of scope capability: its maximum, and zero denies every capture', async t => {
  const { kernel } = setupKernel()
  const two = kernelToken(ALL, { aggregate_invocation_budget: { scope: 'capability', max_invocations: 2 } })
  const verdicts = [await run(kernel, two), await run(kernel, two), await run(kernel, two)].map(e => e.verdict)
  t.match(verdicts, [{ verdict: 'allow' }, { verdict: 'allow' }, { verdict: 'deny', guard: 'BudgetGuard', details: { reason_code: 'aggregate_budget_exhausted' } }])
  const zero = kernelToken(ALL, { aggregate_invocation_budget: { scope: 'capability', max_invocations: 0 } })
  t.match((await run(kernel, zero)).verdict, { verdict: 'deny', details: { reason_code: 'aggregate_budget_exhausted' } })
})

t.test('a delegation_family budget: zero denies; the family shares its root counter; another maximum is refused', async t => {
  const { kernel } = setupKernel()
  const zero = kernelToken(ALL, { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 0 } })
  t.match((await run(kernel, zero)).verdict, { verdict: 'deny', details: { reason_code: 'family_budget_exhausted' } })
  const family = { scope: 'delegation_family' as const, max_invocations: 3, root_binding: 'family-7' }
  const root = kernelToken(ALL, { aggregate_invocation_budget: family })
  const sibling = kernelToken(ALL, { aggregate_invocation_budget: family })
  const results = [await run(kernel, root), await run(kernel, sibling), await run(kernel, root), await run(kernel, sibling)]
  t.same(results.map(e => e.verdict.verdict), ['allow', 'allow', 'allow', 'deny'], 'three captures in all')
  t.match(results[3]!.verdict, { details: { reason_code: 'family_budget_exhausted' } })
  const larger = kernelToken(ALL, { aggregate_invocation_budget: { ...family, max_invocations: 10 } })
  t.match((await run(kernel, larger)).verdict, { verdict: 'deny', details: { reason_code: 'family_budget_mismatch' } })
})

t.test('budget_share_bps caps the token at its share of the aggregate budget', async t => {
  const { kernel } = setupKernel()
  const share = kernelToken(ALL, { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 10, root_binding: 'shared' }, budget_share_bps: 2000 })
  const verdicts = await Promise.all([1, 2, 3].map(() => run(kernel, share)))
  t.same(verdicts.map(e => e.verdict.verdict).sort(), ['allow', 'allow', 'deny'])
  t.ok(verdicts.some(e => e.verdict.verdict === 'deny' && e.verdict.details?.reason_code === 'budget_share_exhausted'))
})

t.test('counters are captured all or none: an exhausted grant spends no aggregate invocation', async t => {
  const { kernel, ports } = setupKernel()
  const tk = kernelToken([{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 1 }, { server_id: 'http', tool_name: 'PATCH /pets/{id}' }], {
    aggregate_invocation_budget: { scope: 'capability', max_invocations: 2 },
  })
  t.equal((await run(kernel, tk)).verdict.verdict, 'allow')
  t.match((await run(kernel, tk)).verdict, { details: { reason_code: 'budget_exhausted' } })
  t.equal((await run(kernel, tk, undefined, '/pets/1', 'PATCH')).verdict.verdict, 'allow', 'the aggregate budget still has its second invocation')
  t.match((await run(kernel, tk, undefined, '/pets/1', 'PATCH')).verdict, { details: { reason_code: 'aggregate_budget_exhausted' } })
  t.ok(ports.stored.length >= 4)
})

t.test('max_cost_per_invocation and max_total_cost; the charged cost is on the receipt and its record', async t => {
  const { kernel, ports } = setupKernel()
  const tk = kernelToken([{ server_id: 'http', tool_name: 'POST /pets', max_cost_per_invocation: { units: 300, currency: 'USD' }, max_total_cost: { units: 500, currency: 'USD' } }])
  t.match((await run(kernel, tk)).verdict, { verdict: 'deny', guard: 'CapabilityGuard', details: { reason_code: 'cost_undeclared' } })
  t.match((await run(kernel, tk, { units: 301, currency: 'USD' })).verdict, { details: { reason_code: 'cost_exceeds_grant' } })
  t.match((await run(kernel, tk, { units: 1, currency: 'EUR' })).verdict, { details: { reason_code: 'cost_currency_mismatch' } })
  const first = await run(kernel, tk, { units: 300, currency: 'USD' })
  t.equal(first.verdict.verdict, 'allow')
  // the agent's subject key is signed with its receipt (stores/receipt-columns.ts)
  t.same(first.receipt.metadata, { gate_http_status_scope: 'decision', financial: { cost_charged: 300, currency: 'USD', grant_index: 0, budget_total: 500, budget_remaining: 200 }, gate_subject_key: tk.subject })
  t.match(ports.stored.at(-1), { costUnits: 300, costCurrency: 'USD', attemptedCostUnits: null })
  const over = await run(kernel, tk, { units: 201, currency: 'USD' })
  t.match(over.verdict, { verdict: 'deny', guard: 'BudgetGuard', details: { reason_code: 'total_cost_exceeded' } })
  t.same(over.receipt.metadata, { gate_http_status_scope: 'decision', financial: { cost_charged: 0, attempted_cost: 201, currency: 'USD' }, gate_subject_key: tk.subject })
  t.match(ports.stored.at(-1), { costUnits: 0, costCurrency: 'USD', attemptedCostUnits: 201 })
  t.equal((await run(kernel, tk, { units: 200, currency: 'USD' })).verdict.verdict, 'allow', 'exactly the rest of the total')
})

t.test('x-gate-budget-limit: the charged cost is recorded; over the limit it is recorded as attempted', async t => {
  const { kernel, ports } = setupKernel()
  const tk = kernelToken(ALL)
  const ok = await run(kernel, tk, { units: 500, currency: 'EUR' }, '/pets/1', 'PATCH')
  t.match(ok.receipt.metadata, { financial: { cost_charged: 500, currency: 'EUR', grant_index: 0 } })
  t.match(ports.stored.at(-1), { costUnits: 500, costCurrency: 'EUR' })
  const over = await run(kernel, tk, { units: 501, currency: 'EUR' }, '/pets/1', 'PATCH')
  t.match(over.verdict, { details: { reason_code: 'budget_limit_exceeded' } })
  t.match(ports.stored.at(-1), { costUnits: 0, costCurrency: 'EUR', attemptedCostUnits: 501 })
  const safe = await kernel.evaluate({ request: kernelRequest('GET', '/pets', { governed_intent: { max_amount: { units: 7, currency: 'EUR' } } }) })
  t.match(safe.receipt.metadata, { financial: { cost_charged: 7, currency: 'EUR' } }, 'a declared cost is charged on a session-allowed route too')
  const none = await run(kernel, tk, undefined, '/pets/1', 'PATCH')
  t.same(none.receipt.metadata, { gate_http_status_scope: 'decision', gate_subject_key: tk.subject }, 'no declared cost, no financial metadata')
})

t.test('a malformed declared cost is denied, never read as no cost', async t => {
  const { kernel } = setupKernel()
  for (const max_amount of [{ units: '9999', currency: 'USD' }, { units: 1 }, { units: -1, currency: 'USD' }, { units: 2 ** 60, currency: 'USD' }, 'lots']) {
    const e = await kernel.evaluate({ request: kernelRequest('GET', '/pets', { governed_intent: { max_amount } }) })
    t.match(e.verdict, { verdict: 'deny', guard: 'BudgetGuard', details: { reason_code: 'cost_malformed' } }, JSON.stringify(max_amount))
  }
})

t.test('a budget held elsewhere that cannot be reached denies the call (fail closed)', async t => {
  const { kernel } = setupKernel()
  const unreachable = setupKernel({ ports: { ...setupKernel().ports, budgets: { capture: async () => ({ allowed: false, failed: { kind: 'unavailable', reason: 'trust-control refused the connection' } }) } } }).kernel
  const budgeted = kernelToken([{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 5 }])
  t.match((await run(unreachable, budgeted)).verdict, { verdict: 'deny', guard: 'BudgetGuard', details: { reason_code: 'budget_authority_unreachable' } })
  t.match((await run(unreachable, kernelToken(ALL))).verdict, { verdict: 'allow' }, 'a token with no budget needs no capture')
  t.match((await run(kernel, budgeted)).verdict, { verdict: 'allow' })
})

// Issue 37: a delegation link's limits bound the sum over all its descendants, whatever ids they carry.
const agents = [31, 32, 33, 34].map(n => exampleSigner('ed25519', n))
const POST: ToolGrant = { server_id: 'http', tool_name: 'POST /pets' }

function link(from: Signer, to: Signer, terms: Partial<DelegationLink>, capabilityId = 'cap-root'): DelegationLink {
  return signDelegationLink({ capability_id: capabilityId, delegatee: to.publicKey, timestamp: KERNEL_NOW - 60, scope: { grants: [POST] }, expires_at: KERNEL_NOW + 600, ...terms }, from)
}

/** `allow`, or the deny's reason_code. */
function outcome(e: Awaited<ReturnType<typeof run>>): string {
  return e.verdict.verdict === 'allow' ? 'allow' : (e.verdict as { details?: { reason_code?: string } }).details?.reason_code ?? e.verdict.verdict
}

function child(signer: Signer, chain: DelegationLink[], id: string, holds: Partial<CapabilityToken> = {}): CapabilityToken {
  return signCapability({ id, subject: agents[3]!.publicKey, scope: { grants: [POST] }, issued_at: KERNEL_NOW - 10, expires_at: KERNEL_NOW + 300, delegation_chain: chain, ...holds }, signer)
}

t.test('each link of a chain bounds all its descendants: the root link across sub-delegations, each sub-link across its own', async t => {
  const { kernel } = setupKernel()
  const [b, c, d] = agents as [Signer, Signer, Signer]
  const root = link(KERNEL_AUTHORITY, b, { scope: { grants: [{ ...POST, max_invocations: 3 }] } })
  // b delegates twice (to c and to d), each time all it may: two invocations more than the root allows
  const toC = link(b, c, { scope: { grants: [{ ...POST, max_invocations: 2 }] }, timestamp: KERNEL_NOW - 50 }, 'cap-b-to-c')
  const toD = link(b, d, { scope: { grants: [{ ...POST, max_invocations: 2 }] }, timestamp: KERNEL_NOW - 50 }, 'cap-b-to-d')
  const grant2 = { scope: { grants: [{ ...POST, max_invocations: 2 }] } }
  const [c1, c2, d1, d2] = [child(c, [root, toC], 'c-1', grant2), child(c, [root, toC], 'c-2', grant2), child(d, [root, toD], 'd-1', grant2), child(d, [root, toD], 'd-2', grant2)]
  const results = [await run(kernel, c1), await run(kernel, c2), await run(kernel, c1), await run(kernel, d1), await run(kernel, d2)]
  t.same(results.map(e => e.verdict.verdict), ['allow', 'allow', 'deny', 'allow', 'deny'])
  t.match(results[2]!.verdict, { guard: 'BudgetGuard', reason: /delegation_chain\[1\] \(delegating capability cap-b-to-c\) allows 2 invocations to all its descendants together \(2 used\)/, details: { reason_code: 'budget_exhausted' } }, "c's link is spent by c-1 and c-2 together")
  t.match(results[4]!.verdict, { reason: /delegation_chain\[0\] \(delegating capability cap-root\) allows 3 invocations/, details: { reason_code: 'budget_exhausted', hint: /delegator/ } }, "and the root link's three by c's and d's children together")
  t.match(results[0]!.evidence.find(g => g.guard_name === 'BudgetGuard'), { details: /delegation_chain\[0\] grant 1 of 3, delegation_chain\[1\] grant 1 of 2/ })
})

t.test("a link's aggregate budget and budget share bound all its descendants", async t => {
  const { kernel } = setupKernel()
  const b = agents[0]!
  const aggregate = { scope: 'capability' as const, max_invocations: 2 }
  const viaAggregate = link(KERNEL_AUTHORITY, b, { aggregate_invocation_budget: aggregate })
  const siblings = ['a-1', 'a-2', 'a-3'].map(id => child(b, [viaAggregate], id, { aggregate_invocation_budget: aggregate }))
  const aggregates = [] as string[]
  for (const s of siblings) aggregates.push(outcome(await run(kernel, s)))
  t.same(aggregates, ['allow', 'allow', 'aggregate_budget_exhausted'], 'two invocations for the three siblings together')

  const family = { scope: 'delegation_family' as const, max_invocations: 10, root_binding: 'shared-family' }
  const viaShare = link(KERNEL_AUTHORITY, b, { aggregate_invocation_budget: family, budget_share_bps: 2000 }, 'cap-share')
  const shares = [] as string[]
  for (const id of ['s-1', 's-2', 's-3']) {
    const s = child(b, [viaShare], id, { aggregate_invocation_budget: family, budget_share_bps: 2000 })
    shares.push(outcome(await run(kernel, s)))
  }
  t.same(shares, ['allow', 'allow', 'budget_share_exhausted'], "the link's 20% of ten is two invocations, for all its children")
})

t.test("a link's max_total_cost bounds what its descendants charge together; the receipt shows the token's own total", async t => {
  const { kernel } = setupKernel()
  const b = agents[0]!
  const capped = { scope: { grants: [{ ...POST, max_total_cost: { units: 500, currency: 'USD' } }] } }
  const via = link(KERNEL_AUTHORITY, b, capped)
  const [x, y] = [child(b, [via], 'x', capped), child(b, [via], 'y', capped)]
  const first = await run(kernel, x, { units: 300, currency: 'USD' })
  t.match(first.receipt.metadata, { financial: { cost_charged: 300, budget_total: 500, budget_remaining: 200 } })
  const over = await run(kernel, y, { units: 300, currency: 'USD' })
  t.match(over.verdict, { verdict: 'deny', reason: /the grant of delegation_chain\[0\].*charged by all its descendants together.*\(300 charged so far\)/, details: { reason_code: 'total_cost_exceeded' } })
  t.match(over.receipt.metadata, { financial: { cost_charged: 0, attempted_cost: 300 } })
  t.match((await run(kernel, y, { units: 200, currency: 'USD' })).receipt.metadata, { financial: { cost_charged: 200, budget_remaining: 300 } }, "y's own total is its own; the link's is spent")
  t.match((await run(kernel, x, { units: 1, currency: 'USD' })).verdict, { details: { reason_code: 'total_cost_exceeded' } })
})

t.test("a trusted issuer's token is bound by the links its chain states too; one whose link does not cover the call is refused", async t => {
  const { kernel } = setupKernel()
  const b = agents[0]!
  const stated = link(KERNEL_AUTHORITY, b, { scope: { grants: [{ ...POST, max_invocations: 1 }] } })
  const issued = ['i-1', 'i-2'].map(id => kernelToken([POST], { id, delegation_chain: [stated] }))
  t.same([(await run(kernel, issued[0]!)).verdict.verdict, (await run(kernel, issued[1]!)).verdict.verdict], ['allow', 'deny'])
  const elsewhere = link(KERNEL_AUTHORITY, b, { scope: { grants: [{ server_id: 'http', tool_name: 'GET /pets' }] } })
  t.match((await run(kernel, kernelToken([POST], { delegation_chain: [elsewhere] }))).verdict, { guard: 'CapabilityGuard', reason: /delegation_chain\[0\] does not delegate this call/, details: { reason_code: 'scope_mismatch' } })
  const shareOnly = link(KERNEL_AUTHORITY, b, { budget_share_bps: 5000 })
  t.match((await run(kernel, kernelToken([POST], { delegation_chain: [shareOnly] }))).verdict, { details: { reason_code: 'budget_share_unsupported' } })
})

t.test('a child holding more than its link (a larger max_invocations or max_total_cost, or none) is refused by attenuation', async t => {
  const { kernel } = setupKernel()
  const b = agents[0]!
  const via = link(KERNEL_AUTHORITY, b, { scope: { grants: [{ ...POST, max_invocations: 1, max_total_cost: { units: 10, currency: 'USD' } }] } })
  for (const grant of [{ max_invocations: 2, max_total_cost: { units: 10, currency: 'USD' } }, { max_total_cost: { units: 10, currency: 'USD' } }, { max_invocations: 1, max_total_cost: { units: 11, currency: 'USD' } }, { max_invocations: 1 }]) {
    const wider = child(b, [via], 'wider', { scope: { grants: [{ ...POST, ...grant }] } })
    t.match((await run(kernel, wider, { units: 1, currency: 'USD' })).verdict, { guard: 'CapabilityGuard', details: { reason_code: 'capability_scope_widened' } }, JSON.stringify(grant))
  }
})
