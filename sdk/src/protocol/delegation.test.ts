import t from 'tap'
import {
  delegatedChild,
  provenanceToken,
  widenedDelegation,
} from './capability-examples.js'
import { signCapability, signDelegationLink, verifyCapability } from './capability.js'
import { MAX_DELEGATION_DEPTH, scopeHash } from './delegation.js'
import { exampleSigner } from './receipt-examples.js'
import type { DelegationTerms } from './scope-subset.js'
import type { CapabilityScope, CapabilityToken } from '../types.js'

const authority = exampleSigner('ed25519', 1)
const agents = [2, 3, 4, 5, 6].map(n => exampleSigner('ed25519', n))
const subject = exampleSigner('ed25519', 9).publicKey
const now = 1_763_700_000
const trustedIssuers = [authority.publicKey]
const petsScope = { grants: [{ server_id: 'http', tool_name: 'GET /pets' }] }

t.test('issue 23 point 1: a child its delegatee signed with a wider scope is refused with a reason code', async t => {
  const child = widenedDelegation({ authority, delegatee: agents[0]!, subject, now })
  const v = verifyCapability(child, { trustedIssuers, now })
  t.match(v, { ok: false, code: 'attenuation_unproven' })
  if (!v.ok) t.match(v.reason, /does not state what it delegates/)
  // the same link stating its scope: the widening itself is found
  const stated = delegatedChild({
    signers: [authority, agents[0]!],
    delegated: [{ scope: petsScope, expires_at: now + 3600 }],
    child: { scope: { grants: [{ server_id: '*', tool_name: '*' }] }, expires_at: now + 3600 },
    subject,
    now,
  })
  const w = verifyCapability(stated, { trustedIssuers, now })
  t.match(w, { ok: false, code: 'scope_widened' })
  if (!w.ok) t.match(w.reason, /grants\[0\] \(\*:\*\): server \* is not http/)
})

t.test('a child within what its chain delegated verifies, with authority "delegated"', async t => {
  const delegated: DelegationTerms = { scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/*', max_invocations: 10 }] }, expires_at: now + 3600 }
  const child = delegatedChild({
    signers: [authority, agents[0]!],
    delegated: [delegated],
    child: { scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets/{id}/adopt', max_invocations: 2 }] }, expires_at: now + 600 },
    subject,
    now,
  })
  t.match(verifyCapability(child, { trustedIssuers, now }), { ok: true, authority: 'delegated' })
  t.match(verifyCapability(child, { trustedIssuers: [agents[3]!.publicKey], now }), { ok: false, code: 'untrusted_issuer' }, 'a chain rooted in an untrusted key')
})

t.test('every link of a delegated chain must be within the link before it', async t => {
  const wide: DelegationTerms = { scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, expires_at: now + 3600 }
  const narrow: DelegationTerms = { scope: petsScope, expires_at: now + 3600 }
  const ok = delegatedChild({ signers: [authority, agents[0]!, agents[1]!], delegated: [wide, narrow], child: narrow, subject, now })
  t.match(verifyCapability(ok, { trustedIssuers, now }), { ok: true })
  // B re-delegates more than A gave it; C's child stays within B's link but not within A's
  const widening = delegatedChild({ signers: [authority, agents[0]!, agents[1]!], delegated: [narrow, wide], child: narrow, subject, now })
  t.match(verifyCapability(widening, { trustedIssuers, now }), { ok: false, code: 'scope_widened', reason: /delegation_chain\[1\] delegates more than it received/ })
  const outliving = delegatedChild({ signers: [authority, agents[0]!, agents[1]!], delegated: [narrow, { ...narrow, expires_at: now + 7200 }], child: narrow, subject, now })
  t.match(verifyCapability(outliving, { trustedIssuers, now }), { ok: false, code: 'scope_widened', reason: /outlives/ })
})

t.test('a delegated child whose link omits its scope, or carries a member Gate does not know, is refused', async t => {
  const base = { signers: [authority, agents[0]!], delegated: [{ scope: petsScope, expires_at: now + 3600 }], child: { scope: petsScope, expires_at: now + 60 }, subject, now }
  const child = delegatedChild(base)
  const resign = (mutate: (c: CapabilityToken) => void): CapabilityToken => {
    const copy = structuredClone(child) as CapabilityToken & Record<string, unknown>
    mutate(copy)
    const link = copy.delegation_chain![0]!
    const { signature: _s, delegator: _d, ...rest } = link
    copy.delegation_chain![0] = signDelegationLink(rest, authority)
    const { signature: _cs, issuer: _i, ...body } = copy
    return signCapability(body, agents[0]!)
  }
  t.match(verifyCapability(resign(c => delete c.delegation_chain![0]!.expires_at), { trustedIssuers, now }), { ok: false, code: 'attenuation_unproven' })
  t.match(verifyCapability(resign(c => delete c.delegation_chain![0]!.scope), { trustedIssuers, now }), { ok: false, code: 'attenuation_unproven' })
  t.match(verifyCapability(resign(c => Object.assign(c.delegation_chain![0]!, { attenuations: [] })), { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /attenuations this verifier does not understand/ })
  t.match(verifyCapability(resign(c => (c.delegation_chain![0]!.scope_hash = scopeHash({ grants: [] }))), { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /hash is not its scope_hash/ })
})

t.test('the shapes the other implementation issues verify (issue 23, point 4)', async t => {
  for (const links of [0, 1, 2, 3, MAX_DELEGATION_DEPTH]) {
    const token = provenanceToken({ issuer: authority, agents, subject, now, links })
    t.match(verifyCapability(token, { trustedIssuers, now: now + 5 }), { ok: true, authority: 'issuer' }, `${links} links dated after issued_at, no scope_hash`)
  }
  for (const scope of [{ resource_grants: [{ uri_pattern: 'file:///data/*', operations: ['read'] }] }, { prompt_grants: [{ prompt_name: 'summarize', operations: ['get'] }] }]) {
    const token = provenanceToken({ issuer: authority, agents, subject, now, links: 2, scope })
    t.match(verifyCapability(token, { trustedIssuers, now }), { ok: true }, `a scope with only ${Object.keys(scope)[0]}`)
  }
  const deep = provenanceToken({ issuer: authority, agents, subject, now, links: MAX_DELEGATION_DEPTH + 1 })
  t.match(verifyCapability(deep, { trustedIssuers, now }), { ok: false, code: 'delegation_too_deep' })
})

t.test('a provenance chain must still be signed, connected and in time order', async t => {
  const token = provenanceToken({ issuer: authority, agents, subject, now, links: 3 })
  const resigned = (mutate: (chain: NonNullable<CapabilityToken['delegation_chain']>) => void) => {
    const copy = structuredClone(token)
    mutate(copy.delegation_chain!)
    const { signature: _s, issuer: _i, ...body } = copy
    return signCapability(body, authority)
  }
  t.match(verifyCapability(resigned(c => (c[1]!.signature = c[2]!.signature)), { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /delegation_chain\[1\] signature/ })
  t.match(verifyCapability(resigned(c => c.splice(1, 1)), { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /does not hand over/ })
  t.match(verifyCapability(resigned(c => c.reverse()), { trustedIssuers, now }), { ok: false, code: 'invalid_delegation' })
  const older = resigned(c => {
    const { signature: _s, delegator: _d, ...rest } = c[2]!
    c[2] = signDelegationLink({ ...rest, timestamp: c[1]!.timestamp - 1 }, agents[1]!)
  })
  t.match(verifyCapability(older, { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /dated after the next link/ })
})

/** Every string and number leaf of a token, with its path. */
function leaves(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; value: string | number }[] {
  if (typeof value === 'string' || typeof value === 'number') return [{ path, value }]
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]))
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]))
  return []
}

function flipped(token: CapabilityToken, path: (string | number)[], value: string | number): CapabilityToken {
  const copy = structuredClone(token) as unknown as Record<string | number, unknown>
  let at = copy
  for (const p of path.slice(0, -1)) at = at[p] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (typeof value === 'number') at[last] = value + 1
  else {
    const i = Math.floor(value.length / 2)
    const c = value[i]!
    at[last] = value.slice(0, i) + (c === 'a' ? 'b' : /[0-9a-f]/.test(c) ? 'a' : c === 'x' ? 'y' : 'x') + value.slice(i + 1)
  }
  return copy as unknown as CapabilityToken
}

t.test('flipping any signed byte of those shapes is detected at the step that checks it', async t => {
  const shapes: [number, CapabilityScope | undefined][] = [[MAX_DELEGATION_DEPTH, undefined], [2, { resource_grants: [{ uri_pattern: 'file:///data/*' }] }], [0, { prompt_grants: [{ prompt_name: 'p' }] }]]
  for (const [links, scope] of shapes) {
    const token = provenanceToken({ issuer: authority, agents, subject, now, links, scope })
    for (const { path, value } of leaves(token)) {
      // a changed issuer is untrusted, unless the chain's root is trusted: then its signature fails
      const expected = path[0] === 'schema' ? 'unknown_schema' : path[0] === 'issuer' && token.delegation_chain === undefined ? 'untrusted_issuer' : 'invalid_signature'
      t.match(verifyCapability(flipped(token, path, value), { trustedIssuers, now: now + 5 }), { ok: false, code: expected }, path.join('.'))
    }
  }
})

t.test('in a delegated child re-signed by its holder, a flipped link byte fails at the chain', async t => {
  const child = delegatedChild({
    signers: [authority, agents[0]!, agents[1]!],
    delegated: [{ scope: petsScope, expires_at: now + 3600 }, { scope: petsScope, expires_at: now + 1800 }],
    child: { scope: petsScope, expires_at: now + 600 },
    subject,
    now,
  })
  for (const { path, value } of leaves(child.delegation_chain).map(l => ({ ...l, path: ['delegation_chain', ...l.path] }))) {
    const mutated = flipped(child, path, value)
    const { signature: _s, issuer: _i, ...body } = mutated
    const v = verifyCapability(signCapability(body, agents[1]!), { trustedIssuers, now })
    // the root's key is what makes the chain trusted; every other byte is covered by a link signature
    const expected = path[1] === 0 && path[2] === 'delegator' ? 'untrusted_issuer' : 'invalid_delegation'
    t.match(v, { ok: false, code: expected }, path.join('.'))
  }
})

t.test('an attenuation proof is recomputed, never trusted', async t => {
  const delegated: DelegationTerms = { scope: petsScope, expires_at: now + 3600 }
  const make = (scope: DelegationTerms['scope'], proof: Record<string, unknown>, trusted = false) => {
    const link = signDelegationLink({ capability_id: 'cap-root', delegatee: agents[0]!.publicKey, timestamp: now - 10, scope: delegated.scope, expires_at: delegated.expires_at }, authority)
    const body = { schema: 'gate.capability.v1' as const, id: 'cap-proof', subject, scope, issued_at: now, expires_at: now + 60, delegation_chain: [link], attenuation_proof: proof as never }
    return trusted ? signCapability(body, authority) : signCapability(body, agents[0]!)
  }
  const honest = { parentScopeHash: scopeHash(petsScope), childScopeHash: scopeHash(petsScope), normalizedSubsetProof: { claims: 'subset' } }
  t.match(verifyCapability(make(petsScope, honest), { trustedIssuers, now }), { ok: true })
  const wider = { grants: [{ server_id: 'http', tool_name: '*' }] }
  const lying = { parentScopeHash: scopeHash(petsScope), childScopeHash: scopeHash(wider), normalizedSubsetProof: { subset: true } }
  t.match(verifyCapability(make(wider, lying, true), { trustedIssuers, now }), { ok: false, code: 'scope_widened', reason: /attenuation_proof claims a subset/ }, 'even in a token a trusted issuer signed')
  t.match(verifyCapability(make(petsScope, { ...honest, childScopeHash: scopeHash(wider) }), { trustedIssuers, now }), { ok: false, code: 'attenuation_proof_invalid' })
  t.match(verifyCapability(make(petsScope, { ...honest, parentScopeHash: scopeHash(wider) }), { trustedIssuers, now }), { ok: false, code: 'attenuation_proof_invalid' })
  const chainless = signCapability({ id: 'c', subject, scope: petsScope, issued_at: now, expires_at: now + 60, attenuation_proof: honest }, authority)
  t.match(verifyCapability(chainless, { trustedIssuers, now }), { ok: false, code: 'attenuation_proof_invalid', reason: /binds no parent/ })
})
