import t from 'tap'
import { authorizeCall, familyBinding, findGrant, planCaptures, type ToolCall } from './capability-use.js'
import { signCapability } from './capability.js'
import { exampleSigner } from './receipt-examples.js'
import type { CapabilityToken, ToolGrant } from '../types.js'

const issuer = exampleSigner('ed25519', 1)
const now = 1_763_700_000

function token(grants: ToolGrant[], extra: Partial<CapabilityToken> = {}): CapabilityToken {
  return signCapability({ id: 'cap-1', subject: issuer.publicKey, scope: { grants }, issued_at: now, expires_at: now + 60, ...extra }, issuer)
}

const call = (extra: Partial<ToolCall> = {}): ToolCall => ({ server_id: 'http', tool_name: 'POST /pets', aliases: ['createPet'], arguments: {}, ...extra })

t.test('a grant covers by server, tool pattern or alias; the first that passes every check is used', async t => {
  t.match(findGrant({ grants: [{ server_id: 'mcp', tool_name: '*' }, { server_id: '*', tool_name: 'createPet' }] }, call()), { ok: true, index: 1 })
  t.match(findGrant({ grants: [{ server_id: 'http', tool_name: 'GET *' }] }, call()), { ok: false, code: 'scope_mismatch' })
  t.match(findGrant({ resource_grants: [{ uri_pattern: '*' }] }, call()), { ok: false, code: 'scope_mismatch' }, 'resource grants authorize no tool call')
  const constrained: ToolGrant = { server_id: 'http', tool_name: '*', constraints: [{ type: 'regex_match', value: '.*' }] }
  t.match(findGrant({ grants: [constrained] }, call()), { ok: false, code: 'constraint_refused' }, 'the reason names the grant that matched the tool')
  t.match(findGrant({ grants: [constrained, { server_id: 'http', tool_name: 'POST /pets' }] }, call()), { ok: true, index: 1 }, 'another grant may still cover it')
})

t.test('operations: a grant listing them must list invoke', async t => {
  t.match(findGrant({ grants: [{ server_id: 'http', tool_name: '*', operations: ['read_result', 'delegate'] }] }, call()), { ok: false, code: 'operation_not_granted' })
  t.match(findGrant({ grants: [{ server_id: 'http', tool_name: '*', operations: ['invoke'] }] }, call()), { ok: true })
})

t.test('dpop_required is refused: a call carries no proof of possession', async t => {
  t.match(findGrant({ grants: [{ server_id: 'http', tool_name: '*', dpop_required: true }] }, call()), { ok: false, code: 'dpop_unsupported' })
  t.match(findGrant({ grants: [{ server_id: 'http', tool_name: '*', dpop_required: false }] }, call()), { ok: true })
})

t.test('cost ceilings need a declared cost in their currency; the per-call one is checked here', async t => {
  const capped: ToolGrant = { server_id: 'http', tool_name: '*', max_cost_per_invocation: { units: 100, currency: 'USD' } }
  t.match(findGrant({ grants: [capped] }, call()), { ok: false, code: 'cost_undeclared' })
  t.match(findGrant({ grants: [capped] }, call({ cost: { units: 50, currency: 'EUR' } })), { ok: false, code: 'cost_currency_mismatch' })
  t.match(findGrant({ grants: [capped] }, call({ cost: { units: 101, currency: 'USD' } })), { ok: false, code: 'cost_exceeds_grant' })
  t.match(findGrant({ grants: [capped] }, call({ cost: { units: 100, currency: 'USD' } })), { ok: true })
  const total: ToolGrant = { server_id: 'http', tool_name: '*', max_total_cost: { units: 100, currency: 'USD' } }
  t.match(findGrant({ grants: [total] }, call()), { ok: false, code: 'cost_undeclared' })
  t.match(findGrant({ grants: [total] }, call({ cost: { units: 1000, currency: 'USD' } })), { ok: true }, 'the running total is the capture\'s to check')
})

t.test('caveats: bind_session and restrict_tool are enforced; other kinds and signed caveats refuse the call', async t => {
  const grants: ToolGrant[] = [{ server_id: 'http', tool_name: '*' }]
  const withCaveat = (kind: string, predicate: unknown, sig?: string) => token(grants, { caveats: [sig === undefined ? { kind, predicate } : { kind, predicate, sig }] })
  t.match(authorizeCall(withCaveat('bind_session', 's-1'), call({ session_id: 's-1' })), { ok: true })
  t.match(authorizeCall(withCaveat('bind_session', 's-1'), call({ session_id: 's-2' })), { ok: false, code: 'caveat_unsatisfied' })
  t.match(authorizeCall(withCaveat('bind_session', 's-1'), call()), { ok: false, code: 'caveat_unsatisfied' })
  t.match(authorizeCall(withCaveat('restrict_tool', 'POST *'), call()), { ok: true })
  t.match(authorizeCall(withCaveat('restrict_tool', 'GET *'), call()), { ok: false, code: 'caveat_unsatisfied' })
  t.match(authorizeCall(withCaveat('restrict_tool', 7), call()), { ok: false, code: 'caveat_malformed' })
  for (const kind of ['restrict_geo', 'restrict_audience', 'restrict_time_window', 'ip_range']) {
    t.match(authorizeCall(withCaveat(kind, 'x'), call()), { ok: false, code: 'caveat_unsupported' }, kind)
  }
  t.match(authorizeCall(withCaveat('bind_session', 's-1', 'a'.repeat(128)), call({ session_id: 's-1' })), { ok: false, code: 'caveat_unsupported', reason: /signed/ })
})

t.test('scope_attenuations refuse the call; a budget share without an aggregate budget too', async t => {
  const grants: ToolGrant[] = [{ server_id: 'http', tool_name: '*' }]
  t.match(authorizeCall(token(grants, { scope_attenuations: [{ remove_tool: 'x' }] }), call()), { ok: false, code: 'scope_attenuations_unsupported' })
  t.match(authorizeCall(token(grants, { scope_attenuations: [] }), call()), { ok: true }, 'an empty list restricts nothing')
  t.match(authorizeCall(token(grants, { budget_share_bps: 5000 }), call()), { ok: false, code: 'budget_share_unsupported' })
})

t.test('captures: grant, aggregate (own or family), share and total cost', async t => {
  const grant: ToolGrant = { server_id: 'http', tool_name: 'POST /pets', max_invocations: 3, max_total_cost: { units: 500, currency: 'USD' } }
  const own = token([grant], { aggregate_invocation_budget: { scope: 'capability', max_invocations: 10 }, budget_share_bps: 2500 })
  t.same(planCaptures(own, 0, grant, { units: 20, currency: 'USD' }), {
    invocations: [
      { owner: 'cap-1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant' },
      { owner: 'cap-1', key: 'aggregate', max: 10, fixedMax: false, kind: 'aggregate' },
      { owner: 'cap-1', key: 'share', max: 2, fixedMax: false, kind: 'share' },
    ],
    cost: { owner: 'cap-1', key: '0:POST /pets', units: 20, currency: 'USD', maxUnits: 500 },
  })
  const family = token([grant], { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 0 } })
  t.match(planCaptures(family, 0, grant, undefined).invocations[1], { owner: 'family:cap-1', key: 'family', max: 0, fixedMax: true })
  const descendant = token([grant], {
    aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 5 },
    delegation_chain: [{ capability_id: 'cap-root', delegator: issuer.publicKey, delegatee: issuer.publicKey, timestamp: now, signature: 'x' }],
  })
  t.equal(familyBinding(descendant, descendant.aggregate_invocation_budget!), 'cap-root', 'a family shares its root\'s counter')
  t.equal(familyBinding(descendant, { ...descendant.aggregate_invocation_budget!, root_binding: 'bound' }), 'bound')
})
