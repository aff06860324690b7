import t from 'tap'
import {
  canonicalJson,
  decisionToVerdict,
  sha256Hex,
  signHttpReceipt,
  toCoreReceipt,
  toCoreReceiptWithKeypair,
  verdictToDecision,
  verifyCoreReceipt,
} from '../index.js'
import { exampleReceiptBody, exampleSigner } from './receipt-examples.js'

const signer = exampleSigner()
const trustedKeys = [signer.publicKey]

t.test('toCoreReceipt without a keypair always refuses', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  t.throws(() => toCoreReceipt(r), { code: 'gate_receipt_sign_failed' })
})

t.test('the mapping table: copied, constant, derived and re-signed fields', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ capability_id: 'cap-9', evidence: [{ guard_name: 'CapabilityGuard', verdict: true }] }), signer)
  const c = toCoreReceiptWithKeypair(r, signer)
  t.equal(c.id, r.id)
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

t.test('tampering with any field fails at content hash or signature', async t => {
  const c = toCoreReceiptWithKeypair(signHttpReceipt(exampleReceiptBody({ capability_id: 'c' }), signer), signer)
  const mutations: Record<string, unknown> = {
    timestamp: 1,
    capability_id: 'd',
    tool_name: 'POST /x',
    action: { parameters: {}, parameter_hash: 'a'.repeat(64) },
    decision: { verdict: 'deny', reason: 'x', guard: 'y' },
    policy_hash: 'e'.repeat(64),
    metadata: null,
    tenant_id: 't',
  }
  for (const [f, v] of Object.entries(mutations)) {
    t.equal(verifyCoreReceipt({ ...c, [f]: v }, { trustedKeys }).failedStep, 'content_hash', f)
  }
  t.equal(verifyCoreReceipt({ ...c, id: 'f'.repeat(64) }, { trustedKeys }).failedStep, 'signature', 'id is signed')
  t.equal(verifyCoreReceipt({ ...c, signature: c.signature.replace(/^./, x => (x === 'a' ? 'b' : 'a')) }, { trustedKeys }).failedStep, 'signature')
  t.equal(verifyCoreReceipt(c, { trustedKeys: [] }).failedStep, 'signer')
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
  for (const m of incoherent) t.equal(verifyCoreReceipt({ ...c, ...m }, { trustedKeys }).failedStep, 'kind', JSON.stringify(m))
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
