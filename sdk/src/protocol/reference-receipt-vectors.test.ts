// Gate's core receipt verifier against the reference implementation's receipt vectors
// (sdk/test-vectors/reference-receipts/README.md names their source): every case, every field both
// report. The reference labels each case twice: `decision` is the receipt's decision verdict ("none"
// without one), which is Gate's `result` ("" without one); `result` is the receipt's class
// (Authorized, Denied, Observed, Advisory, Invalid), which Gate does not report but which follows from
// the kind and the verdict Gate does report, so it is derived here and compared too. Neither label is
// an authorization: `authorized` is (docs/receipts.md).
import { readFileSync } from 'node:fs'
import t from 'tap'
import { verifyCoreReceipt } from './core-receipt.js'

interface ReferenceCase {
  id: string
  description: string
  receipt: Record<string, unknown>
  expected: {
    signature_valid: boolean
    receipt_id_valid: boolean
    parameter_hash_valid: boolean
    signer_trusted: boolean
    ok: boolean
    authorized: boolean
    receipt_kind: string
    boundary_class: string
    trust_level: string
    signer_key_hex: string
    decision: string
    result: string
  }
}

const vectors = JSON.parse(readFileSync(new URL('../../test-vectors/reference-receipts/v1.json', import.meta.url), 'utf8')) as { cases: ReferenceCase[] }

const COMPARED = ['signature_valid', 'receipt_id_valid', 'parameter_hash_valid', 'signer_trusted', 'ok', 'authorized', 'receipt_kind', 'boundary_class', 'trust_level', 'signer_key_hex'] as const

// the reference's `decision` label: the verdict, "none" when the receipt carries no decision
const decisionLabel = (result: string) => (result === '' ? 'none' : result)

// the reference's `result` label: the class of receipt its kind and verdict make
function classLabel(kind: string, result: string): string {
  if (kind === 'trace_observation') return 'Observed'
  if (kind === 'advisory_evaluation') return 'Advisory'
  if (kind !== 'mediated_decision') return 'Invalid'
  return result === 'allow' ? 'Authorized' : result === 'deny' ? 'Denied' : 'Invalid'
}

t.test('the vectors are all there, the two observation cases among them', async t => {
  t.equal(vectors.cases.length, 14)
  const ids = vectors.cases.map(c => c.id)
  t.ok(ids.includes('trace_observation_missing_observation_outcome'))
  t.ok(ids.includes('advisory_evaluation_missing_observation_outcome'))
})

for (const c of vectors.cases) {
  t.test(`${c.id}: Gate reports what the reference expects`, async t => {
    // the reference's verifier trusts no key: neither does this one
    const gate = verifyCoreReceipt(c.receipt, { trustedKeys: [] })
    for (const field of COMPARED) t.equal(gate[field], c.expected[field], `${field} (${c.description})`)
    t.equal(decisionLabel(gate.result), c.expected.decision, 'result ↔ decision')
    t.equal(classLabel(gate.receipt_kind, gate.result), c.expected.result, 'the class the reference names')
  })
}

t.test('with the reference key trusted, ok and authorized follow spec 02 roll-up from the same fields', async t => {
  for (const c of vectors.cases) {
    const e = c.expected
    const gate = verifyCoreReceipt(c.receipt, { trustedKeys: [e.signer_key_hex] })
    const mediated = e.receipt_kind === 'mediated_decision' && e.boundary_class === 'prevent' && e.trust_level === 'mediated'
    const ok = e.signature_valid && e.receipt_id_valid && e.parameter_hash_valid && mediated
    t.match(gate, { signer_trusted: true, ok, authorized: ok && e.decision === 'allow' }, c.id)
  }
})
