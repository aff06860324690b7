// No field of gate.capability.v1 is accepted and ignored. The test walks the schema's properties
// (through every definition they reach: scope, grants, monetary amounts, links, budgets, caveats,
// attenuation proofs) and needs, for each one, a probe here that shows the field changing the decision
// the kernel takes: enforced, or the request refused. A field added to the schema without a probe, or
// a probe for a field the schema no longer has, fails it.
import t, { type Test } from 'tap'
import { scopeHash, signCapability, signDelegationLink, type CapabilityToken, type DelegationLink, type ToolGrant } from '@gate/sdk'
import { delegatedChild, exampleSigner } from '@gate/sdk/testing'
import { getSchema } from '@gate/schemas'
import { KERNEL_AUTHORITY, KERNEL_NOW, kernelRequest, kernelToken, setupKernel } from '../testing/kernel-setup.js'
import { encodeCapabilityToken } from './capability-token.js'
import type { EvaluateInput } from './kernel.js'

type Schema = { properties?: Record<string, Schema>; items?: Schema; $ref?: string; anyOf?: Schema[] }

/** `definition.property` for every property reachable from the root (`token.*`), each definition once. */
function schemaFields(): string[] {
  const root = getSchema('gate.capability.v1') as Schema & { $defs: Record<string, Schema> }
  const fields: string[] = []
  const seen = new Set<string>()
  const visit = (name: string, schema: Schema) => {
    if (seen.has(name)) return
    seen.add(name)
    for (const [prop, sub] of Object.entries(schema.properties ?? {})) {
      fields.push(`${name}.${prop}`)
      follow(sub)
    }
    follow({ items: schema.items, anyOf: schema.anyOf })
  }
  const follow = (s: Schema) => {
    if (s.$ref?.startsWith('#/$defs/')) {
      const def = s.$ref.slice('#/$defs/'.length)
      visit(def, root.$defs[def]!)
    }
    if (s.items !== undefined && s.items !== null) follow(s.items)
    for (const alternative of s.anyOf ?? []) follow(alternative)
  }
  visit('token', root)
  return fields.sort()
}

const ALL: ToolGrant[] = [{ server_id: 'http', tool_name: '*' }]
const agentB = exampleSigner('ed25519', 31)
const subjectC = exampleSigner('ed25519', 32).publicKey

async function evaluate(token: object, request = kernelRequest('POST', '/pets'), setup = setupKernel(), extra: Partial<EvaluateInput> = {}) {
  return setup.kernel.evaluate({ request, capabilityHeader: encodeCapabilityToken(token as CapabilityToken), ...extra })
}

async function allows(t: Test, token: object, request = kernelRequest('POST', '/pets')) {
  const e = await evaluate(token, request)
  t.equal(e.verdict.verdict, 'allow', 'baseline allowed')
}

async function denies(t: Test, token: object, reasonCode: string, request = kernelRequest('POST', '/pets'), setup = setupKernel()) {
  const e = await evaluate(token, request, setup)
  t.match(e.verdict, { verdict: 'deny', details: { reason_code: reasonCode } }, reasonCode)
}

/** A child signed by B under a link from the kernel's authority stating `link`, holding `child`. */
function child(link: Partial<DelegationLink>, holds: Partial<CapabilityToken> = {}): CapabilityToken {
  const delegated = { scope: { grants: ALL }, expires_at: KERNEL_NOW + 600, ...link }
  const signed = signDelegationLink({ capability_id: 'cap-parent', delegatee: agentB.publicKey, timestamp: KERNEL_NOW - 60, ...delegated } as never, KERNEL_AUTHORITY)
  return signCapability({ id: 'cap-child', subject: subjectC, scope: { grants: ALL }, issued_at: KERNEL_NOW - 10, expires_at: KERNEL_NOW + 300, delegation_chain: [signed], ...holds }, agentB)
}

const grant = (g: Partial<ToolGrant>) => kernelToken([{ server_id: 'http', tool_name: '*', ...g }])
const cost = (units: number, currency = 'USD') => kernelRequest('POST', '/pets', { governed_intent: { max_amount: { units, currency } } })
const family = { scope: 'delegation_family' as const, max_invocations: 1, root_binding: 'probe-family' }

const PROBES: Record<string, (t: Test) => Promise<void>> = {
  'token.schema': async t => denies(t, kernelToken(ALL, { schema: 'gate.capability.v2' as never }), 'capability_malformed'),
  'token.id': async t => {
    const setup = setupKernel()
    const tk = kernelToken(ALL)
    setup.ports.revoked.add(tk.id)
    await denies(t, tk, 'capability_revoked', kernelRequest('POST', '/pets'), setup)
  },
  'token.issuer': async t => denies(t, kernelToken(ALL, {}, exampleSigner('ed25519', 99)), 'capability_untrusted_issuer'),
  'token.subject': async t => {
    const setup = setupKernel()
    await evaluate(kernelToken(ALL, { subject: subjectC }), kernelRequest('POST', '/pets'), setup)
    t.equal(setup.ports.stored.at(-1)?.subjectKey, subjectC, "recorded as the receipt's agent subject")
  },
  'token.scope': async t => denies(t, kernelToken([{ server_id: 'http', tool_name: 'GET *' }]), 'scope_mismatch'),
  'token.issued_at': async t => denies(t, kernelToken(ALL, { issued_at: KERNEL_NOW + 5 }), 'capability_not_yet_valid'),
  'token.expires_at': async t => denies(t, kernelToken(ALL, { expires_at: KERNEL_NOW }), 'capability_expired'),
  'token.delegation_chain': async t => {
    await allows(t, child({}))
    await denies(t, child({ scope: { grants: [{ server_id: 'http', tool_name: 'GET *' }] } }), 'capability_scope_widened')
  },
  'token.aggregate_invocation_budget': async t => denies(t, kernelToken(ALL, { aggregate_invocation_budget: { scope: 'delegation_family', max_invocations: 0 } }), 'family_budget_exhausted'),
  'token.algorithm': async t => denies(t, kernelToken(ALL, { algorithm: 'p256' }), 'capability_malformed'),
  'token.caveats': async t => denies(t, kernelToken(ALL, { caveats: [{ kind: 'restrict_geo', predicate: 'EU' }] }), 'caveat_unsupported'),
  'token.scope_attenuations': async t => denies(t, kernelToken(ALL, { scope_attenuations: [{ remove_tool: 'x' }] }), 'scope_attenuations_unsupported'),
  'token.attenuation_proof': async t => {
    const proof = { parentScopeHash: scopeHash({ grants: ALL }), childScopeHash: scopeHash({ grants: ALL }), normalizedSubsetProof: {} }
    await denies(t, kernelToken(ALL, { attenuation_proof: proof }), 'capability_attenuation_proof_invalid')
  },
  'token.budget_share_bps': async t => {
    const setup = setupKernel()
    const tk = kernelToken(ALL, { aggregate_invocation_budget: { scope: 'capability', max_invocations: 4 }, budget_share_bps: 2500 })
    t.equal((await evaluate(tk, kernelRequest('POST', '/pets'), setup)).verdict.verdict, 'allow')
    await denies(t, tk, 'budget_share_exhausted', kernelRequest('POST', '/pets'), setup)
  },
  'token.signature': async t => denies(t, { ...kernelToken(ALL), signature: kernelToken([]).signature }, 'capability_invalid_signature'),
  'scope.grants': async t => denies(t, kernelToken({ grants: [] }), 'scope_mismatch'),
  'scope.resource_grants': async t => {
    await denies(t, kernelToken({ resource_grants: [{ uri_pattern: '*' }] }), 'scope_mismatch')
    await denies(t, child({}, { scope: { grants: ALL, resource_grants: [{ uri_pattern: '*' }] } }), 'capability_scope_widened')
  },
  'scope.prompt_grants': async t => {
    await denies(t, kernelToken({ prompt_grants: [{ prompt_name: '*' }] }), 'scope_mismatch')
    await denies(t, child({}, { scope: { grants: ALL, prompt_grants: [{ prompt_name: '*' }] } }), 'capability_scope_widened')
  },
  'tool_grant.server_id': async t => denies(t, kernelToken([{ server_id: 'mcp', tool_name: '*' }]), 'scope_mismatch'),
  'tool_grant.tool_name': async t => denies(t, kernelToken([{ server_id: 'http', tool_name: 'POST /pets/*' }]), 'scope_mismatch', kernelRequest('POST', '/petsx')),
  'tool_grant.operations': async t => denies(t, grant({ operations: ['read_result'] }), 'operation_not_granted'),
  'tool_grant.constraints': async t => denies(t, grant({ constraints: [{ type: 'custom', value: ['owner', 'ann'] }] }), 'constraint_unsatisfied'),
  'tool_grant.max_invocations': async t => denies(t, grant({ max_invocations: 0 }), 'budget_exhausted'),
  'tool_grant.max_cost_per_invocation': async t => denies(t, grant({ max_cost_per_invocation: { units: 5, currency: 'USD' } }), 'cost_exceeds_grant', cost(6)),
  'tool_grant.max_total_cost': async t => denies(t, grant({ max_total_cost: { units: 5, currency: 'USD' } }), 'total_cost_exceeded', cost(6)),
  'tool_grant.dpop_required': async t => denies(t, grant({ dpop_required: true }), 'dpop_unsupported'),
  'monetary_amount.units': async t => {
    await allows(t, grant({ max_cost_per_invocation: { units: 6, currency: 'USD' } }), cost(6))
    await denies(t, grant({ max_cost_per_invocation: { units: 5, currency: 'USD' } }), 'cost_exceeds_grant', cost(6))
  },
  'monetary_amount.currency': async t => denies(t, grant({ max_cost_per_invocation: { units: 5, currency: 'EUR' } }), 'cost_currency_mismatch', cost(1)),
  'delegation_link.capability_id': async t => {
    const setup = setupKernel()
    setup.ports.revoked.add('cap-parent')
    await denies(t, child({}), 'capability_revoked', kernelRequest('POST', '/pets'), setup)
  },
  'delegation_link.delegator': async t => {
    const link = signDelegationLink({ capability_id: 'cap-parent', delegatee: agentB.publicKey, timestamp: KERNEL_NOW - 60, scope: { grants: ALL }, expires_at: KERNEL_NOW + 600 }, exampleSigner('ed25519', 98))
    await denies(t, signCapability({ id: 'c', subject: subjectC, scope: { grants: ALL }, issued_at: KERNEL_NOW - 1, expires_at: KERNEL_NOW + 60, delegation_chain: [link] }, agentB), 'capability_untrusted_issuer')
  },
  'delegation_link.delegatee': async t => denies(t, child({ delegatee: subjectC }), 'capability_invalid_delegation'),
  'delegation_link.scope_hash': async t => denies(t, child({ scope_hash: scopeHash({ grants: [] }) }), 'capability_invalid_delegation'),
  'delegation_link.timestamp': async t => denies(t, child({ timestamp: KERNEL_NOW }), 'capability_invalid_delegation'),
  'delegation_link.scope': async t => denies(t, child({ scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/*', max_invocations: 3 }] } }), 'capability_scope_widened'),
  'delegation_link.expires_at': async t => denies(t, child({ expires_at: KERNEL_NOW + 60 }), 'capability_scope_widened'),
  'delegation_link.budget_share_bps': async t => denies(t, child({ budget_share_bps: 1000 }), 'capability_scope_widened'),
  'delegation_link.aggregate_invocation_budget': async t => {
    await denies(t, child({ aggregate_invocation_budget: family }), 'capability_scope_widened')
    await allows(t, child({ aggregate_invocation_budget: family }, { aggregate_invocation_budget: family }))
  },
  'delegation_link.signature': async t => {
    const tk = child({})
    const forged = { ...tk.delegation_chain![0]!, signature: agentB.sign(new Uint8Array([1])) }
    const { signature: _s, issuer: _i, ...body } = { ...tk, delegation_chain: [forged] }
    await denies(t, signCapability(body, agentB), 'capability_invalid_delegation')
  },
  'aggregate_invocation_budget.scope': async t => {
    const setup = setupKernel()
    const shared = (scope: 'capability' | 'delegation_family') => kernelToken(ALL, { aggregate_invocation_budget: { scope, max_invocations: 1, root_binding: 'probe-scope' } })
    t.equal((await evaluate(shared('delegation_family'), kernelRequest('POST', '/pets'), setup)).verdict.verdict, 'allow')
    await denies(t, shared('delegation_family'), 'family_budget_exhausted', kernelRequest('POST', '/pets'), setup)
    t.equal((await evaluate(shared('capability'), kernelRequest('POST', '/pets'), setup)).verdict.verdict, 'allow', 'a capability budget counts for its token alone')
  },
  'aggregate_invocation_budget.max_invocations': async t => denies(t, kernelToken(ALL, { aggregate_invocation_budget: { scope: 'capability', max_invocations: 0 } }), 'aggregate_budget_exhausted'),
  'aggregate_invocation_budget.root_binding': async t => {
    const setup = setupKernel()
    const bound = (root_binding: string) => kernelToken(ALL, { aggregate_invocation_budget: { ...family, root_binding } })
    t.equal((await evaluate(bound('one'), kernelRequest('POST', '/pets'), setup)).verdict.verdict, 'allow')
    await denies(t, bound('one'), 'family_budget_exhausted', kernelRequest('POST', '/pets'), setup)
    t.equal((await evaluate(bound('two'), kernelRequest('POST', '/pets'), setup)).verdict.verdict, 'allow', 'another family, another counter')
  },
  'caveat.kind': async t => {
    await allows(t, kernelToken(ALL, { caveats: [{ kind: 'restrict_tool', predicate: 'POST *' }] }))
    await denies(t, kernelToken(ALL, { caveats: [{ kind: 'restrict_time_window', predicate: 'POST *' }] }), 'caveat_unsupported')
  },
  'caveat.predicate': async t => denies(t, kernelToken(ALL, { caveats: [{ kind: 'restrict_tool', predicate: 'GET *' }] }), 'caveat_unsatisfied'),
  'caveat.sig': async t => denies(t, kernelToken(ALL, { caveats: [{ kind: 'restrict_tool', predicate: 'POST *', sig: 'a'.repeat(128) }] }), 'caveat_unsupported'),
  'attenuation_proof.parentScopeHash': async t => {
    const proof = { parentScopeHash: scopeHash({ grants: [] }), childScopeHash: scopeHash({ grants: ALL }), normalizedSubsetProof: {} }
    await denies(t, child({}, { attenuation_proof: proof }), 'capability_attenuation_proof_invalid')
  },
  'attenuation_proof.childScopeHash': async t => {
    const proof = { parentScopeHash: scopeHash({ grants: ALL }), childScopeHash: scopeHash({ grants: [] }), normalizedSubsetProof: {} }
    await denies(t, child({}, { attenuation_proof: proof }), 'capability_attenuation_proof_invalid')
  },
  'attenuation_proof.normalizedSubsetProof': async t => {
    // the witness is never trusted: its claim is recomputed, and a token it does not cover is refused
    const narrow = { grants: [{ server_id: 'http', tool_name: 'GET *' }] }
    const link = signDelegationLink({ capability_id: 'cap-parent', delegatee: agentB.publicKey, timestamp: KERNEL_NOW - 60, scope: narrow, expires_at: KERNEL_NOW + 600 }, KERNEL_AUTHORITY)
    const proof = { parentScopeHash: scopeHash(narrow), childScopeHash: scopeHash({ grants: ALL }), normalizedSubsetProof: { subset: true } }
    await denies(t, signCapability({ id: 'c', subject: subjectC, scope: { grants: ALL }, issued_at: KERNEL_NOW - 1, expires_at: KERNEL_NOW + 60, delegation_chain: [link], attenuation_proof: proof }, KERNEL_AUTHORITY), 'capability_scope_widened')
  },
}

t.test('every property of gate.capability.v1 has a probe, and every probe a property', async t => {
  t.same(Object.keys(PROBES).sort(), schemaFields())
})

for (const [field, probe] of Object.entries(PROBES)) t.test(`${field} is enforced or refuses the request`, probe)

t.test('delegatedChild (the shared fixture) builds children the kernel accepts', async t => {
  const tk = delegatedChild({ signers: [KERNEL_AUTHORITY, agentB], delegated: [{ scope: { grants: ALL }, expires_at: KERNEL_NOW + 60 }], child: { scope: { grants: ALL }, expires_at: KERNEL_NOW + 30 }, subject: subjectC, now: KERNEL_NOW })
  await allows(t, tk)
})
