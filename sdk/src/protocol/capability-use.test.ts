import t from 'tap'
import { authorizeCall, familyBinding, findGrant, planCaptures, type GrantMatch, type ToolCall } from './capability-use.js'
import { signCapability, signDelegationLink } from './capability.js'
import { siblingChildren } from './capability-examples.js'
import { canonicalJson } from './canonical-json.js'
import { delegationLinkId } from './delegation.js'
import { exampleSigner } from './receipt-examples.js'
import { sha256Hex } from './sha256.js'
import type { CapabilityToken, DelegationLink, ToolGrant } from '../types.js'

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
  t.same(planCaptures(own, { index: 0, grant, links: [] }, { units: 20, currency: 'USD' }), {
    invocations: [
      { owner: 'cap-1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant' },
      { owner: 'cap-1', key: 'aggregate', max: 10, fixedMax: false, kind: 'aggregate' },
      { owner: 'cap-1', key: 'share', max: 2, fixedMax: false, kind: 'share' },
    ],
    costs: [{ owner: 'cap-1', key: '0:POST /pets', units: 20, currency: 'USD', maxUnits: 500 }],
  })
  const family = token([grant], { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 0 } })
  t.match(planCaptures(family, { index: 0, grant, links: [] }, undefined).invocations[1], { owner: 'family:cap-1', key: 'family', max: 0, fixedMax: true })
  const descendant = token([grant], {
    aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 5 },
    delegation_chain: [{ capability_id: 'cap-root', delegator: issuer.publicKey, delegatee: issuer.publicKey, timestamp: now, signature: 'x' }],
  })
  t.equal(familyBinding(descendant, descendant.aggregate_invocation_budget!), 'cap-root', 'a family shares its root\'s counter')
  t.equal(familyBinding(descendant, { ...descendant.aggregate_invocation_budget!, root_binding: 'bound' }), 'bound')
})

// Issue 37: the counters of a delegation link are keyed by what its delegator signed.
const delegatee = exampleSigner('ed25519', 2)
const linked = (grant: ToolGrant, count: number) =>
  siblingChildren({ authority: issuer, delegatee, capabilityId: 'cap-root', delegated: { scope: { grants: [grant] }, expires_at: now + 60 }, subject: issuer.publicKey, now, count })

function matched(tk: CapabilityToken, c = call()): GrantMatch {
  const m = authorizeCall(tk, c)
  if (!m.ok) throw new Error(m.reason)
  return m
}

t.test("a link's id is the hash of what its delegator signed: not its signature, every other member", async t => {
  const body = { capability_id: 'cap-root', delegatee: delegatee.publicKey, timestamp: now, scope: { grants: [] }, expires_at: now + 60 }
  const p256 = exampleSigner('p256', 3)
  const [one, two] = [signDelegationLink(body, p256), signDelegationLink(body, p256)]
  t.not(one.signature, two.signature, 'ECDSA: two signatures over one body')
  t.equal(delegationLinkId(one), delegationLinkId(two), 'one link, one id')
  const { signature: _s, ...signed } = one
  t.equal(delegationLinkId(one), sha256Hex(canonicalJson(signed)), 'SHA-256 of the canonical signed members')
  t.not(delegationLinkId(signDelegationLink({ ...body, timestamp: now + 1 }, p256)), delegationLinkId(one), 'another timestamp, another link')
  t.not(delegationLinkId(signDelegationLink(body, issuer)), delegationLinkId(one), 'another delegator, another link')
})

t.test("siblings of one link capture that link's counters under one owner, whatever their ids", async t => {
  const grant: ToolGrant = { server_id: 'http', tool_name: 'POST /pets', max_invocations: 1, max_total_cost: { units: 50, currency: 'USD' } }
  const [a, b] = linked(grant, 2) as [CapabilityToken, CapabilityToken]
  const cost = { units: 5, currency: 'USD' }
  const pa = planCaptures(a, matched(a, call({ cost })), cost)
  const pb = planCaptures(b, matched(b, call({ cost })), cost)
  const owner = `link:${delegationLinkId(a.delegation_chain![0]!)}`
  t.same(pa.invocations, [
    { owner: 'cap-sibling-1', key: '0:POST /pets', max: 1, fixedMax: false, kind: 'grant' },
    { owner, key: 'link:0:POST /pets', max: 1, fixedMax: false, kind: 'grant', link: 0 },
  ])
  t.same(pa.costs[1], { owner, key: 'link:0:POST /pets', units: 5, currency: 'USD', maxUnits: 50, link: 0 })
  t.same(pa.invocations[1], pb.invocations[1], 'the sibling advances the same link counter')
  t.not(pa.invocations[0]!.owner, pb.invocations[0]!.owner, 'and a grant counter of its own')
})

t.test("a link's aggregate budget and share are its own counters; a delegation_family budget is the family's one", async t => {
  const family = { scope: 'delegation_family' as const, max_invocations: 8, root_binding: 'fam' }
  const viaFamily = signDelegationLink({ capability_id: 'cap-root', delegatee: delegatee.publicKey, timestamp: now, aggregate_invocation_budget: family, budget_share_bps: 2500 }, issuer)
  const tk = signCapability({ id: 'cap-c', subject: issuer.publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, issued_at: now, expires_at: now + 60, delegation_chain: [viaFamily], aggregate_invocation_budget: family }, issuer)
  const plan = planCaptures(tk, matched(tk), undefined)
  const owner = `link:${delegationLinkId(viaFamily)}`
  t.same(plan.invocations.map(c => [c.owner, c.key, c.max]), [['family:fam', 'family', 8], [owner, 'link:share', 2]], 'the family counter once, and the link\'s share of it')
  const own = { scope: 'capability' as const, max_invocations: 4 }
  const viaOwn = signDelegationLink({ capability_id: 'cap-root', delegatee: delegatee.publicKey, timestamp: now, aggregate_invocation_budget: own }, issuer)
  const tk2 = signCapability({ id: 'cap-d', subject: issuer.publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, issued_at: now, expires_at: now + 60, delegation_chain: [viaOwn] }, issuer)
  t.same(planCaptures(tk2, matched(tk2), undefined).invocations, [{ owner: `link:${delegationLinkId(viaOwn)}`, key: 'link:aggregate', max: 4, fixedMax: false, kind: 'aggregate', link: 0 }])
})

t.test('one signed link twice in a chain is one budget, captured once', async t => {
  const self = signDelegationLink({ capability_id: 'cap-root', delegatee: issuer.publicKey, timestamp: now, scope: { grants: [{ server_id: 'http', tool_name: '*', max_invocations: 2 }] }, expires_at: now + 60 }, issuer)
  const tk = signCapability({ id: 'cap-e', subject: issuer.publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, issued_at: now, expires_at: now + 60, delegation_chain: [self, self] }, issuer)
  t.equal(planCaptures(tk, matched(tk), undefined).invocations.length, 1)
})

t.test('a link that states a scope must cover the call; a link it cannot read refuses it', async t => {
  const link = (terms: Partial<DelegationLink>) => signDelegationLink({ capability_id: 'cap-root', delegatee: delegatee.publicKey, timestamp: now, ...terms }, issuer)
  const holding = (l: DelegationLink) => token([{ server_id: 'http', tool_name: '*' }], { delegation_chain: [l] })
  t.match(authorizeCall(holding(link({ scope: { grants: [{ server_id: 'http', tool_name: 'GET *' }] } })), call()), { ok: false, code: 'scope_mismatch', reason: /^delegation_chain\[0\] does not delegate this call/ })
  t.match(authorizeCall(holding(link({ scope: { grants: [{ server_id: 'http', tool_name: '*', max_total_cost: { units: 1, currency: 'USD' } }] } })), call()), { ok: false, code: 'cost_undeclared' }, 'its grant\'s own checks apply')
  t.match(authorizeCall(holding(link({ scope: null as never })), call()), { ok: false, code: 'scope_mismatch', reason: /cannot read/ })
  t.match(authorizeCall(holding(link({ scope: { grants: [{ server_id: 'http', tool_name: '*', max_invocations: -1 }] } })), call()), { ok: false, reason: /cannot read/ })
  t.match(authorizeCall(holding(link({ aggregate_invocation_budget: { scope: 'forever', max_invocations: 1 } as never })), call()), { ok: false, reason: /aggregate_invocation_budget this verifier cannot read/ })
  t.match(authorizeCall(holding(link({ budget_share_bps: 10_001, aggregate_invocation_budget: { scope: 'capability', max_invocations: 1 } })), call()), { ok: false, reason: /budget_share_bps this verifier cannot read/ })
  t.match(authorizeCall(holding(link({ budget_share_bps: 100 })), call()), { ok: false, code: 'budget_share_unsupported' })
  t.match(authorizeCall(holding(link({})), call()), { ok: true, links: [] }, 'a link stating no scope (provenance) bounds nothing')
  t.match(authorizeCall(holding(link({ scope: { grants: [{ server_id: 'mcp', tool_name: '*' }, { server_id: 'http', tool_name: 'POST *' }] } })), call()), { ok: true, links: [{ link: 0, index: 1 }] })
})
