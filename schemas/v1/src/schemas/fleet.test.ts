// The fleet protocol between a sidecar and trust-control (docs/fleet.md): ingest, key enrolment, the
// revocation feed, budget capture and the authority answers.
import { checkSchema } from '../examples/check-schema.js'
import { coreReceipt, ED25519_KEY, hex, httpReceipt, HYBRID_P384_KEY, P256_KEY, variant } from '../examples/values.js'

const httpItem = { receipt: httpReceipt(), tenant: 'acme', subjectKey: ED25519_KEY, costUnits: 20, costCurrency: 'EUR', attemptedCostUnits: null, kind: 'decision', decisionReceiptId: null }
const coreItem = { coreReceipt: coreReceipt(), requestId: 'mcp-call-1', tenant: 'acme' }

checkSchema(
  'gate.fleet.ingest_request.v1',
  [
    { name: 'an HTTP receipt and a core receipt', value: { receipts: [httpItem, coreItem] } },
    { name: 'a bare receipt', value: { receipts: [{ receipt: httpReceipt() }] } },
  ],
  [
    { name: 'no receipts', value: { receipts: [] }, at: '/receipts' },
    { name: 'over 1,000 receipts', value: { receipts: Array.from({ length: 1001 }, () => ({ receipt: httpReceipt() })) }, at: '/receipts' },
    { name: 'an unknown member of the body', value: { receipts: [httpItem], extra: 1 }, at: '(root)' },
    { name: 'an unknown member of an item', value: { receipts: [{ ...httpItem, surprise: 1 }] }, at: '/receipts/0' },
    { name: 'a lower-case currency', value: { receipts: [{ ...httpItem, costCurrency: 'eur' }] }, at: '/receipts/0/costCurrency' },
    { name: 'a negative cost', value: { receipts: [{ ...httpItem, costUnits: -1 }] }, at: '/receipts/0/costUnits' },
    { name: 'an unknown kind', value: { receipts: [{ ...httpItem, kind: 'later' }] }, at: '/receipts/0/kind' },
    { name: 'a core receipt without its request id', value: { receipts: [{ coreReceipt: coreReceipt() }] }, at: '/receipts/0' },
    { name: 'a request id beside an HTTP receipt', value: { receipts: [{ ...httpItem, requestId: 'x' }] }, at: '/receipts/0' },
    { name: 'both receipt members', value: { receipts: [{ ...coreItem, receipt: httpReceipt() }] }, at: '/receipts/0' },
    { name: 'a receipt that is not an HttpReceipt', value: { receipts: [{ receipt: variant(httpReceipt(), r => (r.verdict = 'allow')) }] }, at: '/receipts/0/receipt/verdict' },
    { name: 'a core receipt with a bad decision', value: { receipts: [{ ...coreItem, coreReceipt: variant(coreReceipt(), r => (r.timestamp = 'yesterday')) }] }, at: '/receipts/0/coreReceipt/timestamp' },
  ],
)

checkSchema(
  'gate.fleet.ingest_response.v1',
  [{ name: 'one stored, one duplicate', value: { received: 2, stored: 1, duplicates: 1, results: [{ receiptId: hex(64, 1), seq: 7, stored: true }, { receiptId: hex(64, 2), seq: 3, stored: false }] } }],
  [
    { name: 'no results', value: { received: 1, stored: 1, duplicates: 0 }, at: '(root)' },
    { name: 'a result without its seq', value: { received: 1, stored: 1, duplicates: 0, results: [{ receiptId: hex(64, 1), stored: true }] }, at: '/results/0' },
  ],
)

checkSchema(
  'gate.fleet.enroll_request.v1',
  [
    { name: 'an Ed25519 key', value: { publicKey: ED25519_KEY, label: 'sidecar-eu-1' } },
    { name: 'a P-256 key', value: { publicKey: P256_KEY, label: 'gate api protect 127.0.0.1:9090' } },
    { name: 'a hybrid key', value: { publicKey: HYBRID_P384_KEY, label: 'gate sidecar (hybrid)' } },
  ],
  [
    { name: 'an upper-case key', value: { publicKey: ED25519_KEY.toUpperCase(), label: 'x' }, at: '/publicKey' },
    { name: 'an empty label', value: { publicKey: ED25519_KEY, label: '' }, at: '/label' },
    { name: 'a label with a control character', value: { publicKey: ED25519_KEY, label: 'a\nb' }, at: '/label' },
    { name: 'an unknown member', value: { publicKey: ED25519_KEY, label: 'x', token: 'y' }, at: '(root)' },
  ],
)

const enrolled = { publicKey: ED25519_KEY, label: 'sidecar-eu-1', enrolledAt: 1_763_700_000 }
checkSchema('gate.fleet.enrolled_key.v1', [{ name: 'an enrolment answer', value: { ...enrolled, created: false } }, { name: 'a listed key', value: enrolled }], [
  { name: 'no time', value: variant(enrolled, v => delete v.enrolledAt), at: '(root)' },
])
checkSchema('gate.fleet.key_list.v1', [{ name: 'two keys', value: { keys: [enrolled, { ...enrolled, publicKey: P256_KEY }] } }], [
  { name: 'a key without a label', value: { keys: [variant(enrolled, v => delete v.label)] }, at: '/keys/0' },
])

const page = { revocations: [{ seq: 41, capabilityId: 'cap_1', revokedAt: 1_763_700_000 }], nextCursor: 41, latestSeq: 41, authorityGeneration: 2, authorityPublicKey: ED25519_KEY }
checkSchema('gate.fleet.revocation_page.v1', [{ name: 'a page', value: page }, { name: 'an empty page', value: { ...page, revocations: [] } }], [
  { name: 'no cursor', value: variant(page, v => delete v.nextCursor), at: '(root)' },
  { name: 'a revocation without its id', value: variant(page, v => delete v.revocations[0].capabilityId), at: '/revocations/0' },
  { name: 'a fractional seq', value: variant(page, v => (v.latestSeq = 1.5)), at: '/latestSeq' },
])

const counter = { owner: 'cap_1', key: '0:POST /pets', max: 3, fixedMax: false, kind: 'grant' }
const cost = { owner: 'link:ab', key: 'link:0:POST /pets', units: 30, currency: 'USD', maxUnits: 100, link: 0 }
checkSchema(
  'gate.fleet.capture_request.v1',
  [
    { name: 'counters and costs', value: { invocations: [counter, { ...counter, owner: 'link:ab', link: 3 }], costs: [cost] } },
    { name: 'counters alone (costs absent)', value: { invocations: [counter] } },
    { name: 'named, with the sender\'s deadline', value: { invocations: [counter], captureId: '0190b3c4-7d2e-7a1b-9c3d-4e5f6a7b8c9d', deadlineMs: 5000 } },
  ],
  [
    { name: 'an empty owner', value: { invocations: [{ ...counter, owner: '' }] }, at: '/invocations/0/owner' },
    { name: 'a negative maximum', value: { invocations: [{ ...counter, max: -1 }] }, at: '/invocations/0/max' },
    { name: 'an unknown kind', value: { invocations: [{ ...counter, kind: 'quota' }] }, at: '/invocations/0/kind' },
    { name: 'a link past the deepest chain', value: { invocations: [{ ...counter, link: 4 }] }, at: '/invocations/0/link' },
    { name: 'a lower-case currency', value: { invocations: [], costs: [{ ...cost, currency: 'usd' }] }, at: '/costs/0/currency' },
    { name: 'a single cost member', value: { invocations: [], cost }, at: '(root)' },
    { name: 'seventeen counters', value: { invocations: Array.from({ length: 17 }, (_, i) => ({ ...counter, key: String(i) })) }, at: '/invocations' },
    { name: 'a capture id with a space', value: { invocations: [counter], captureId: 'a b' }, at: '/captureId' },
    { name: 'an empty capture id', value: { invocations: [counter], captureId: '' }, at: '/captureId' },
    { name: 'a zero deadline', value: { invocations: [counter], deadlineMs: 0 }, at: '/deadlineMs' },
    { name: 'a deadline over a minute', value: { invocations: [counter], deadlineMs: 60_001 }, at: '/deadlineMs' },
  ],
)

checkSchema('gate.fleet.capture_cancel.v1', [{ name: 'an id', value: { captureId: 'req-1' } }], [
  { name: 'no id', value: {}, at: '(root)' },
  { name: 'an id over 128 characters', value: { captureId: 'x'.repeat(129) }, at: '/captureId' },
  { name: 'an unknown member', value: { captureId: 'req-1', plan: {} }, at: '(root)' },
])
checkSchema('gate.fleet.capture_cancelled.v1', [{ name: 'reversed', value: { captureId: 'req-1', reversed: true } }], [
  { name: 'without the outcome', value: { captureId: 'req-1' }, at: '(root)' },
])

checkSchema(
  'gate.fleet.capture_result.v1',
  [
    { name: 'captured', value: { allowed: true, used: [1, 3], costUnits: [30] } },
    { name: 'an exhausted counter', value: { allowed: false, failed: { kind: 'invocation', index: 1, used: 3 } } },
    { name: 'another fixed maximum', value: { allowed: false, failed: { kind: 'max_mismatch', index: 0, recordedMax: 5 } } },
    { name: 'a cost cap', value: { allowed: false, failed: { kind: 'cost', index: 0, units: 90 } } },
  ],
  [
    { name: 'captured without the counters', value: { allowed: true, costUnits: [] }, at: '(root)' },
    { name: 'refused without why', value: { allowed: false }, at: '(root)' },
    { name: 'an unknown failure', value: { allowed: false, failed: { kind: 'unavailable', reason: 'x' } }, at: '/failed' },
    { name: 'a failure without its value', value: { allowed: false, failed: { kind: 'cost', index: 0 } }, at: '/failed' },
  ],
)

const authority = { publicKey: ED25519_KEY, generation: 2, rotatedAt: 1_763_700_000, trustedPublicKeys: [hex(64, 9), ED25519_KEY], trustedKeyCount: 2 }
checkSchema(
  'gate.fleet.authority.v1',
  [
    { name: 'the status', value: authority },
    { name: 'a rotation', value: { ...authority, previousPublicKey: hex(64, 9) } },
    { name: 'a key no store records', value: { ...authority, generation: 0, rotatedAt: null } },
  ],
  [
    { name: 'no trusted keys', value: variant(authority, v => delete v.trustedPublicKeys), at: '(root)' },
    { name: 'a malformed key', value: variant(authority, v => (v.publicKey = 'abc')), at: '/publicKey' },
  ],
)
