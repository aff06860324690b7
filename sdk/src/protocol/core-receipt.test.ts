import t from 'tap'
import {
  canonicalJson,
  coreReceiptId,
  decisionToVerdict,
  sha256Hex,
  signHttpReceipt,
  toCoreReceipt,
  signCoreReceipt,
  signCoreReceiptJson,
  toCoreReceiptJson,
  toCoreReceiptWithKeypair,
  verdictToDecision,
  verifyCoreReceipt,
} from '../index.js'
import { exampleCoreReceiptDraft, exampleReceiptBody, exampleSigner } from './receipt-examples.js'

const signer = exampleSigner()
const trustedKeys = [signer.publicKey]

t.test('toCoreReceipt without a keypair always refuses', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  t.throws(() => toCoreReceipt(r), { code: 'gate_receipt_sign_failed' })
})

t.test('the mapping table: copied, constant, derived and re-signed fields', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ capability_id: 'cap-9', evidence: [{ guard_name: 'CapabilityGuard', verdict: true }] }), signer)
  const c = toCoreReceiptWithKeypair(r, signer)
  const { id, signature: _sig, ...body } = c
  t.equal(id, coreReceiptId(body), 'the id is the content address of the core body (spec 03), not the HTTP id')
  t.not(id, r.id)
  t.equal(c.timestamp, r.timestamp)
  t.equal(c.policy_hash, r.policy_hash)
  t.same(c.evidence, r.evidence)
  t.same(c.metadata, r.metadata)
  t.equal(c.trust_level, r.trust_level)
  t.equal(c.kernel_key, r.kernel_key)
  t.equal(c.capability_id, 'cap-9')
  t.equal(c.tool_server, 'http')
  t.equal(c.tool_name, 'GET /pets/{id}')
  t.same(c.action.parameters, { method: 'GET', route: '/pets/{id}', request_id: r.request_id })
  t.equal(c.action.parameter_hash, sha256Hex(canonicalJson(c.action.parameters)))
  t.same(c.decision, { verdict: 'allow' })
  t.equal(c.receipt_kind, r.receipt_kind)
  t.equal(c.boundary_class, r.boundary_class)
  t.equal(c.tool_origin, r.tool_origin)
  t.equal(c.redaction_mode, r.redaction_mode)
  t.equal(c.tenant_id, null)
  t.equal(c.bbs_projection_version, null)
  t.not(c.signature, r.signature, 'the HTTP signature is never copied')
  const { id: _i, signature: _s, content_hash, ...preimage } = c
  t.equal(content_hash, sha256Hex(canonicalJson(preimage)))
  t.ok(verifyCoreReceipt(c, { trustedKeys }).ok)
})

t.test('toCoreReceiptJson writes the bytes of the canonical toCoreReceiptWithKeypair, for every algorithm', async t => {
  const bodies = [
    exampleReceiptBody(),
    exampleReceiptBody({ capability_id: 'cap-9', evidence: [{ guard_name: 'CapabilityGuard', verdict: true, details: 'é \u2028 "q"' }] }),
    exampleReceiptBody({ verdict: { verdict: 'deny', reason: 'x', guard: 'CapabilityGuard' }, metadata: { z: [1, { b: 2, a: null }], a: 'ü' } }),
    exampleReceiptBody({ actor_chain: [{ subject: 'a', capability_id: 'c1' }] } as never),
  ]
  for (const algorithm of ['ed25519', 'p256', 'p384'] as const) {
    const s = exampleSigner(algorithm)
    for (const body of bodies) {
      const r = signHttpReceipt(body, s)
      const json = toCoreReceiptJson(r, s)
      const expected = canonicalJson(toCoreReceiptWithKeypair(r, s))
      // ECDSA signatures are randomized: compare the rest of the text; Ed25519's are deterministic
      const unsigned = (text: string) => text.replace(/"signature":"[^"]*"/, '"signature":""')
      if (algorithm === 'ed25519') t.equal(json, expected, `${algorithm}: the same bytes`)
      else t.equal(unsigned(json), unsigned(expected), `${algorithm}: the same bytes but the signature`)
      t.ok(verifyCoreReceipt(JSON.parse(json), { trustedKeys: [s.publicKey] }).ok, `${algorithm}: it verifies`)
    }
  }
  t.throws(() => toCoreReceiptJson(signHttpReceipt(exampleReceiptBody(), signer), exampleSigner('ed25519', 1)), { code: 'gate_receipt_sign_failed' })
})

t.test('signCoreReceiptJson stores the canonical bytes of the receipt it signs, for every algorithm', async t => {
  const parameters = { path: '/tmp/é \u2028', n: [1, 2.5, { b: null, a: true }] }
  const toolBody = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    ...exampleCoreReceiptDraft(1, { capability_id: 'cap-1', action: { parameters, parameter_hash: sha256Hex(canonicalJson(parameters)) } }),
    decision: { verdict: 'deny', reason: 'no grant', guard: 'CapabilityGuard' },
    ...extra,
  })
  for (const algorithm of ['ed25519', 'p256', 'p384'] as const) {
    const s = exampleSigner(algorithm)
    for (const body of [toolBody(), toolBody({ metadata: { z: 1, a: ['ü'] } })]) {
      const { receipt, json } = signCoreReceiptJson(body, s)
      t.equal(json, canonicalJson(receipt), `${algorithm}: the stored text is the receipt's canonical JSON`)
      t.equal(receipt.kernel_key, s.publicKey)
      t.equal((receipt as unknown as Record<string, unknown>).algorithm, algorithm === 'ed25519' ? undefined : algorithm, `${algorithm}: algorithm named unless Ed25519`)
      t.ok(verifyCoreReceipt(JSON.parse(json), { trustedKeys: [s.publicKey] }).ok, `${algorithm}: it verifies`)
      if (algorithm === 'ed25519') {
        t.equal(json, canonicalJson(signCoreReceipt({ ...body, kernel_key: s.publicKey }, s)), 'the same bytes as signCoreReceipt')
      }
    }
  }
  t.throws(() => signCoreReceiptJson(toolBody({ decision: null }), signer), { code: 'gate_receipt_sign_failed', message: /must carry a decision/ })
  const failing = { ...signer, sign: () => { throw new Error('hardware key gone') } }
  t.throws(() => signCoreReceiptJson(toolBody(), failing), { code: 'gate_receipt_sign_failed', message: /the signer failed/ })
})

t.test('null capability_id becomes the empty string', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  t.equal(c.capability_id, '')
})

t.test('verdict ↔ decision mapping, both ways', async t => {
  t.same(verdictToDecision({ verdict: 'deny', reason: 'r', guard: 'g', http_status: 451, details: { hint: 'h' } }), { verdict: 'deny', reason: 'r', guard: 'g' })
  t.same(verdictToDecision({ verdict: 'cancel', reason: 'r' }), { verdict: 'cancelled', reason: 'r' })
  t.same(verdictToDecision({ verdict: 'incomplete', reason: 'r' }), { verdict: 'incomplete', reason: 'r' })
  t.same(decisionToVerdict({ verdict: 'deny', reason: 'r', guard: 'g' }), { verdict: 'deny', reason: 'r', guard: 'g', http_status: 403 })
  t.same(decisionToVerdict({ verdict: 'cancelled', reason: 'r' }), { verdict: 'cancel', reason: 'r' })
  t.same(decisionToVerdict({ verdict: 'incomplete', reason: 'r' }), { verdict: 'incomplete', reason: 'r' })
  t.same(decisionToVerdict({ verdict: 'allow' }), { verdict: 'allow' })
})

t.test('a keypair other than the receipt signer is refused', async t => {
  t.throws(() => toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), exampleSigner('ed25519', 1)), { code: 'gate_receipt_sign_failed' })
})

t.test('only a mediated allow is an authorization', async t => {
  const deny = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody({ verdict: { verdict: 'deny', reason: 'x', guard: 'CapabilityGuard' } }), signer), signer)
  const v = verifyCoreReceipt(deny, { trustedKeys })
  t.equal(v.ok, true)
  t.equal(v.authorized, false)
})

t.test('tampering with any body field fails at the id step; every field reports as spec 02 defines it', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody({ capability_id: 'c' }), signer), signer)
  const mutations: Record<string, unknown> = {
    timestamp: 1,
    capability_id: 'd',
    tool_name: 'POST /x',
    action: { parameters: {}, parameter_hash: 'a'.repeat(64) },
    decision: { verdict: 'deny', reason: 'x', guard: 'y' },
    content_hash: 'b'.repeat(64),
    policy_hash: 'e'.repeat(64),
    metadata: null,
    tenant_id: 't',
  }
  for (const [f, v] of Object.entries(mutations)) {
    t.match(verifyCoreReceipt({ ...c, [f]: v }, { trustedKeys }), { failedStep: 'receipt_id', receipt_id_valid: false, signature_valid: false, ok: false }, f)
  }
  t.match(verifyCoreReceipt({ ...c, signature: c.signature.replace(/^./, x => (x === 'a' ? 'b' : 'a')) }, { trustedKeys }), { failedStep: 'signature', receipt_id_valid: true, signature_valid: false })
  t.match(verifyCoreReceipt(c, { trustedKeys: [] }), { failedStep: 'signer', signature_valid: true, signer_trusted: false, ok: false })
})

t.test('a swapped id fails with receipt_id_valid false before the signature is looked at', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const other = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody({ request_id: 'another' }), signer), signer)
  for (const id of ['f'.repeat(64), other.id, signHttpReceipt(exampleReceiptBody(), signer).id]) {
    const v = verifyCoreReceipt({ ...c, id }, { trustedKeys })
    t.match(v, { receipt_id_valid: false, signature_valid: false, ok: false, authorized: false, failedStep: 'receipt_id' }, id)
    t.equal(v.parameter_hash_valid, true, 'computed on its own')
  }
})

t.test('semantics fail first, and receipt_id_valid is still computed on its own', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, ...body } = c
  // an incoherent body whose id and signature are right: only the semantics step fails
  const incoherent = { ...body, trust_level: 'verified' }
  const id = coreReceiptId(incoherent)
  const signed = { ...incoherent, id, signature: signer.sign(new TextEncoder().encode(canonicalJson({ id, body: incoherent }))) }
  t.match(verifyCoreReceipt(signed, { trustedKeys }), { failedStep: 'semantics', receipt_id_valid: true, signature_valid: false, parameter_hash_valid: true, ok: false })
  t.match(verifyCoreReceipt({ ...c, trust_level: 'verified' }, { trustedKeys }), { failedStep: 'semantics', receipt_id_valid: false, signature_valid: false })
})

t.test('a receipt of another implementation verifies: content_hash binds content Gate cannot see', async t => {
  // written from spec 03 alone: content_hash is the request's content hash, not a hash of the receipt
  const body = {
    timestamp: 1_763_700_000,
    capability_id: 'cap-elsewhere',
    tool_server: 'files',
    tool_name: 'read_file',
    action: { parameters: { path: '/tmp/x' }, parameter_hash: sha256Hex(canonicalJson({ path: '/tmp/x' })) },
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    tool_origin: 'host_executed_provider_reported',
    redaction_mode: 'none',
    decision: { verdict: 'allow' },
    content_hash: sha256Hex('the tool call content'),
    policy_hash: 'c'.repeat(64),
    evidence: [{ guard_name: 'ScopeGuard', verdict: true }],
    trust_level: 'mediated',
    kernel_key: signer.publicKey,
  }
  const id = sha256Hex(canonicalJson(body))
  const receipt = { id, ...body, signature: signer.sign(new TextEncoder().encode(canonicalJson({ id, body }))) }
  t.match(verifyCoreReceipt(receipt, { trustedKeys }), { ok: true, authorized: true, signature_valid: true, receipt_id_valid: true, parameter_hash_valid: true, result: 'allow', failedStep: null })
  t.same(signCoreReceipt(body, signer), receipt, 'signCoreReceipt writes the same bytes')
})

t.test('parameter_hash_valid is computed on its own: a malformed content_hash keeps a valid signature', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, ...body } = c
  const resigned = signCoreReceipt({ ...body, content_hash: 'NOT-HEX' }, signer)
  t.match(verifyCoreReceipt(resigned, { trustedKeys }), { signature_valid: true, receipt_id_valid: true, parameter_hash_valid: false, ok: false, failedStep: 'parameter_hash' })
})

t.test('parameter_hash_valid also needs action.parameter_hash to hash action.parameters', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, ...body } = c
  for (const action of [
    { parameters: c.action.parameters, parameter_hash: '0'.repeat(64) },
    { parameters: { ...c.action.parameters, route: '/admin' }, parameter_hash: c.action.parameter_hash },
    { parameters: c.action.parameters },
    { parameter_hash: c.action.parameter_hash },
  ]) {
    const resigned = signCoreReceipt({ ...body, action }, signer)
    t.match(verifyCoreReceipt(resigned, { trustedKeys }), { signature_valid: true, receipt_id_valid: true, parameter_hash_valid: false, ok: false, authorized: false, failedStep: 'parameter_hash', detail: /action\.parameter_hash/ }, JSON.stringify(action))
  }
  t.match(verifyCoreReceipt({ ...c, action: 'x' }, { trustedKeys }), { parameter_hash_valid: false, receipt_id_valid: false })
})

t.test('bbs_signature is outside the id but inside the signature; bbs_projection_version is inside both', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, ...body } = c
  const withBbs = { ...body, bbs_projection_version: 'gate.bbs-projection.receipt.v1' }
  const id = coreReceiptId(withBbs)
  const bbs_signature = 'ab'.repeat(40)
  const signature = signer.sign(new TextEncoder().encode(canonicalJson({ id, body: withBbs, bbs_signature })))
  const receipt = { ...withBbs, id, bbs_signature, signature }
  t.match(verifyCoreReceipt(receipt, { trustedKeys }), { ok: true })
  t.match(verifyCoreReceipt({ ...receipt, bbs_signature: 'cd'.repeat(40) }, { trustedKeys }), { receipt_id_valid: true, failedStep: 'signature' })
  t.match(verifyCoreReceipt({ ...receipt, bbs_projection_version: null }, { trustedKeys }), { receipt_id_valid: false, failedStep: 'receipt_id' })
})

t.test('trace and advisory receipts verify as evidence, never as an authorization', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, decision: _d, ...body } = c
  const trace = signCoreReceipt({ ...body, receipt_kind: 'trace_observation', boundary_class: 'detect_only', trust_level: 'verified', observation_outcome: 'observed' }, signer)
  t.match(verifyCoreReceipt(trace, { trustedKeys }), { signature_valid: true, receipt_id_valid: true, ok: false, authorized: false, failedStep: null, result: '' })
})

t.test('a trace or advisory receipt without observation_outcome is not signable and never verifies', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const { id: _id, signature: _s, decision: _d, ...body } = c
  const kinds = [
    { receipt_kind: 'trace_observation', boundary_class: 'detect_only', trust_level: 'verified' },
    { receipt_kind: 'advisory_evaluation', boundary_class: 'advisory_only', trust_level: 'advisory' },
  ]
  for (const kind of kinds) {
    for (const outcome of [{}, { observation_outcome: null }, { observation_outcome: '' }]) {
      const incoherent = { ...body, ...kind, ...outcome }
      const label = `${kind.receipt_kind} ${JSON.stringify(outcome)}`
      t.throws(() => signCoreReceipt(incoherent, signer), { code: 'gate_receipt_sign_failed', message: /must carry observation_outcome/ }, `${label}: signCoreReceipt refuses`)
      t.throws(() => signCoreReceiptJson(incoherent, signer), { code: 'gate_receipt_sign_failed', message: /must carry observation_outcome/ }, `${label}: signCoreReceiptJson refuses`)
      // signed anyway, outside Gate: the id is right, the receipt is still not a signed receipt
      const id = coreReceiptId(incoherent)
      const forged = { ...incoherent, id, signature: signer.sign(new TextEncoder().encode(canonicalJson({ id, body: incoherent }))) }
      t.match(verifyCoreReceipt(forged, { trustedKeys }), { failedStep: 'semantics', signature_valid: false, receipt_id_valid: true, ok: false, authorized: false }, `${label}: verification`)
    }
    const coherent = signCoreReceipt({ ...body, ...kind, observation_outcome: 'observed' }, signer)
    t.match(verifyCoreReceipt(coherent, { trustedKeys }), { signature_valid: true, failedStep: null }, `${kind.receipt_kind} with an outcome verifies`)
  }
})

t.test('kind coherence is enforced on verify', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), signer), signer)
  const incoherent = [
    { receipt_kind: 'trace_observation' },
    { boundary_class: 'detect_only' },
    { trust_level: 'verified' },
    { decision: undefined },
    { receipt_kind: 'trace_observation', boundary_class: 'detect_only', trust_level: 'verified' },
    { receipt_kind: 'advisory_evaluation', boundary_class: 'advisory_only', trust_level: 'advisory' },
    { observation_outcome: 'x' },
    { bbs_projection_version: 'gate.bbs-projection.receipt.v9' },
    { receipt_kind: 'bogus' },
  ]
  for (const m of incoherent) t.equal(verifyCoreReceipt({ ...c, ...m }, { trustedKeys }).failedStep, 'semantics', JSON.stringify(m))
})

t.test('P-256 keypair yields an algorithm hint and verifies', async t => {
  const s = exampleSigner('p256')
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody(), s), s)
  t.equal(c.algorithm, 'p256')
  t.ok(verifyCoreReceipt(c, { trustedKeys: [s.publicKey], backend: 'noble' }).ok)
  t.ok(verifyCoreReceipt(c, { trustedKeys: [s.publicKey], backend: 'node' }).ok)
})

t.test('garbage never throws', async t => {
  for (const g of [null, 3, [], {}, { id: 'x', signature: 'y', kernel_key: 'z' }]) t.equal(verifyCoreReceipt(g).ok, false)
})
