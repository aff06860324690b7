// The budget guard through the kernel: invocation counters (grant, aggregate, delegation family,
// budget share) captured all or none, cost ceilings, and the charged cost on the receipt.
import t from 'tap'
import type { CapabilityToken, MonetaryAmount } from '@gate/sdk'
import { kernelRequest, kernelToken, setupKernel } from '../../testing/kernel-setup.js'
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
