import t from 'tap'
import { signCapability, signDelegationLink, scopeHash, verifyCapability, type CapabilityToken } from '../index.js'
import { exampleSigner } from './receipt-examples.js'

const authority = exampleSigner('ed25519', 1)
const agent = exampleSigner('ed25519', 2)
const now = 1_763_700_000
const trustedIssuers = [authority.publicKey]

function token(overrides: Partial<CapabilityToken> = {}): CapabilityToken {
  return signCapability(
    {
      schema: 'gate.capability.v1',
      id: 'cap-1',
      subject: agent.publicKey,
      scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets', max_invocations: 3 }] },
      issued_at: now - 10,
      expires_at: now + 3600,
      ...overrides,
    },
    authority,
  )
}

t.test('a signed token verifies inside its window', async t => {
  const v = verifyCapability(token(), { trustedIssuers, now })
  t.equal(v.ok, true)
})

t.test('the window is issued_at <= now < expires_at', async t => {
  const tk = token()
  t.equal(verifyCapability(tk, { trustedIssuers, now: tk.issued_at }).ok, true)
  t.match(verifyCapability(tk, { trustedIssuers, now: tk.issued_at - 1 }), { ok: false, code: 'not_yet_valid' })
  t.match(verifyCapability(tk, { trustedIssuers, now: tk.expires_at }), { ok: false, code: 'expired' })
  t.equal(verifyCapability(tk, { trustedIssuers, now: tk.expires_at - 1 }).ok, true)
})

t.test('an expired or not yet valid token says when, as an ISO 8601 date beside the Unix seconds', async t => {
  const tk = token({ issued_at: 1_795_687_200, expires_at: 1_795_690_800 })
  t.match(verifyCapability(tk, { trustedIssuers, now: 1_795_690_800 }), { reason: 'the token expired at 2026-11-26T11:00:00Z (1795690800)' })
  t.match(verifyCapability(tk, { trustedIssuers, now: 1_795_687_199 }), { reason: 'the token is not valid before 2026-11-26T10:00:00Z (1795687200)' })
})

t.test('every failure has its code and a reason', async t => {
  const tk = token()
  const cases: [string, unknown, string][] = [
    ['not an object', 'x', 'malformed'],
    ['missing id', { ...tk, id: undefined }, 'malformed'],
    ['bad grants', { ...tk, scope: { grants: 'x' } }, 'malformed'],
    ['negative max_invocations', { ...tk, scope: { grants: [{ server_id: 'http', tool_name: 'x', max_invocations: -1 }] } }, 'malformed'],
    ['unknown schema', { ...tk, schema: 'gate.capability.v2' }, 'unknown_schema'],
    ['unknown algorithm', { ...tk, algorithm: 'rsa' }, 'unsupported_algorithm'],
    ['hybrid algorithm on an Ed25519 key', { ...tk, algorithm: 'hybrid' }, 'unsupported_algorithm'],
    ['algorithm/key mismatch', { ...tk, algorithm: 'p256' }, 'unsupported_algorithm'],
    ['budget share over 10000', { ...tk, budget_share_bps: 10001 }, 'invalid_budget_share'],
    ['budget share fractional', { ...tk, budget_share_bps: 1.5 }, 'invalid_budget_share'],
    ['untrusted issuer', token(), 'untrusted_issuer'],
  ]
  for (const [name, value, code] of cases) {
    const v = verifyCapability(value, { trustedIssuers: name === 'untrusted issuer' ? [agent.publicKey] : trustedIssuers, now })
    t.match(v, { ok: false, code }, name)
    if (!v.ok) t.ok(v.reason.length > 0)
  }
  t.equal(verifyCapability(token({ budget_share_bps: 10000 }), { trustedIssuers, now }).ok, true, '10000 bps is allowed')
})

t.test('flipping any signed field or the signature fails with invalid_signature', async t => {
  const tk = token({ budget_share_bps: 5000 })
  const mutations: Record<string, unknown> = {
    id: 'cap-2',
    subject: authority.publicKey,
    scope: { grants: [{ server_id: 'http', tool_name: '*', max_invocations: 3 }] },
    issued_at: tk.issued_at - 1,
    expires_at: tk.expires_at + 1,
    budget_share_bps: 4000,
    caveats: [],
  }
  for (const [f, v] of Object.entries(mutations)) t.match(verifyCapability({ ...tk, [f]: v }, { trustedIssuers, now }), { ok: false, code: 'invalid_signature' }, f)
  const sig = tk.signature.replace(/^./, c => (c === '0' ? '1' : '0'))
  t.match(verifyCapability({ ...tk, signature: sig }, { trustedIssuers, now }), { ok: false, code: 'invalid_signature' })
})

t.test('P-256 issuers carry an algorithm field and verify', async t => {
  const p = exampleSigner('p256', 4)
  const tk = signCapability({ id: 'c', subject: agent.publicKey, scope: { grants: [] }, issued_at: now, expires_at: now + 1 }, p)
  t.equal(tk.algorithm, 'p256')
  t.equal(verifyCapability(tk, { trustedIssuers: [p.publicKey], now }).ok, true)
  t.equal(verifyCapability(tk, { trustedIssuers: [p.publicKey], now, backend: 'noble' }).ok, true)
})

t.test('delegation chain: a trusted root hands over to the agent that signs the child', async t => {
  const sub = exampleSigner('ed25519', 3)
  const scope = { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }
  const link = signDelegationLink({ capability_id: 'cap-root', delegatee: agent.publicKey, scope, expires_at: now + 3600, timestamp: now - 100 }, authority)
  t.equal(link.scope_hash, scopeHash(scope), 'a link carrying its scope gets its scope_hash')
  const delegated = signCapability({ id: 'cap-child', subject: sub.publicKey, scope, issued_at: now - 5, expires_at: now + 60, delegation_chain: [link] }, agent)
  t.match(verifyCapability(delegated, { trustedIssuers, now }), { ok: true, authority: 'delegated' })
  // a forged link (signed by the agent itself) does not verify
  const forgedLink = { ...link, signature: agent.sign(new Uint8Array([1])) }
  const forged = signCapability({ id: 'cap-child', subject: sub.publicKey, scope, issued_at: now - 5, expires_at: now + 60, delegation_chain: [forgedLink] }, agent)
  t.match(verifyCapability(forged, { trustedIssuers, now }), { ok: false, code: 'invalid_delegation' })
  // a chain that does not end at the child's signer
  const stray = signDelegationLink({ capability_id: 'cap-root', delegatee: sub.publicKey, scope, expires_at: now + 3600, timestamp: now - 100 }, authority)
  const broken = signCapability({ id: 'cap-child', subject: sub.publicKey, scope, issued_at: now - 5, expires_at: now + 60, delegation_chain: [stray] }, agent)
  t.match(verifyCapability(broken, { trustedIssuers, now }), { ok: false, code: 'invalid_delegation' })
  // a link dated after the child it delegates to was signed
  const late = signDelegationLink({ capability_id: 'cap-root', delegatee: agent.publicKey, scope, expires_at: now + 3600, timestamp: now }, authority)
  const early = signCapability({ id: 'cap-child', subject: sub.publicKey, scope, issued_at: now - 5, expires_at: now + 60, delegation_chain: [late] }, agent)
  t.match(verifyCapability(early, { trustedIssuers, now }), { ok: false, code: 'invalid_delegation', reason: /dated after the child/ })
  // untrusted root
  t.match(verifyCapability(delegated, { trustedIssuers: [sub.publicKey], now }), { ok: false, code: 'untrusted_issuer' })
})

t.test('a signature cache skips re-verification but never the window, trust or a changed body', async t => {
  const { VerifiedSignatureCache } = await import('./signature-cache.js')
  const cache = new VerifiedSignatureCache(2)
  const tk = token()
  t.equal(verifyCapability(tk, { trustedIssuers, now, cache }).ok, true)
  t.equal(cache.size, 1)
  t.equal(verifyCapability(tk, { trustedIssuers, now, cache }).ok, true, 'hit')
  t.match(verifyCapability(tk, { trustedIssuers, now: tk.expires_at, cache }), { ok: false, code: 'expired' }, 'window still checked')
  t.match(verifyCapability(tk, { trustedIssuers: [agent.publicKey], now, cache }), { ok: false, code: 'untrusted_issuer' }, 'trust still checked')
  t.match(verifyCapability({ ...tk, subject: authority.publicKey }, { trustedIssuers, now, cache }), { ok: false, code: 'invalid_signature' }, 'changed body misses')
  verifyCapability(token({ id: 'x1' }), { trustedIssuers, now, cache })
  verifyCapability(token({ id: 'x2' }), { trustedIssuers, now, cache })
  t.equal(cache.size, 2, 'bounded')
})
