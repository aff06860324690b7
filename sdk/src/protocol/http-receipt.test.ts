import t from 'tap'
import fc from 'fast-check'
import {
  canonicalJson,
  checkHttpReceipt,
  checkHttpReceiptOffThread,
  httpReceiptColumns,
  signHttpReceipt,
  signHttpReceiptJson,
  sha256Hex,
  verifyHttpReceipt,
  type HttpReceipt,
} from '../index.js'
import { exampleReceiptBody, exampleSigner } from './receipt-examples.js'

const signer = exampleSigner()
const trustedKeys = [signer.publicKey]

t.test('a signed receipt verifies and every field of VerifyReceiptResponse is right', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  t.same(verifyHttpReceipt(r, { trustedKeys }), {
    signature_valid: true,
    signer_trusted: true,
    receipt_id_valid: true,
    parameter_hash_valid: true,
    receipt_kind: 'mediated_decision',
    boundary_class: 'prevent',
    trust_level: 'mediated',
    result: 'allow',
    authorized: true,
    signer_key_hex: signer.publicKey,
    ok: true,
  })
})

t.test('id is the SHA-256 of the canonical body without id and signature; a caller id is overwritten', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ id: 'f'.repeat(64) }), signer)
  const { id, signature, ...body } = r
  t.equal(id, sha256Hex(canonicalJson(body)))
  t.not(id, 'f'.repeat(64))
  t.ok(signature.length === 128)
})

t.test('the returned JSON is the canonical form of the signed receipt', async t => {
  const { receipt, json } = signHttpReceiptJson(exampleReceiptBody(), signer)
  t.equal(json, canonicalJson(receipt))
  t.same(JSON.parse(json), receipt)
})

t.test('signing refuses bodies outside the authority semantics', async t => {
  const cases = [
    { receipt_kind: 'trace_observation' },
    { boundary_class: 'detect_only' },
    { trust_level: 'verified' },
    { observation_outcome: 'observed' },
  ] as const
  for (const c of cases) {
    t.throws(() => signHttpReceipt(exampleReceiptBody(c as never), signer), { code: 'gate_receipt_sign_failed' }, JSON.stringify(c))
  }
  t.throws(() => signHttpReceipt(exampleReceiptBody({ kernel_key: exampleSigner('ed25519', 9).publicKey }), signer), {
    code: 'gate_receipt_sign_failed',
  })
})

t.test('observation_outcome null is treated as absent', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ observation_outcome: null } as never), signer)
  t.notOk('observation_outcome' in r)
  t.ok(verifyHttpReceipt(r, { trustedKeys }).ok)
})

t.test('verdicts map to result strings; only allow is authorized', async t => {
  const verdicts = [
    [{ verdict: 'allow' }, 'allow', true],
    [{ verdict: 'deny', reason: 'no token', guard: 'CapabilityGuard', http_status: 403 }, 'deny', false],
    [{ verdict: 'cancel', reason: 'timeout' }, 'cancelled', false],
    [{ verdict: 'incomplete', reason: 'nonce' }, 'incomplete', false],
  ] as const
  for (const [verdict, result, authorized] of verdicts) {
    const v = verifyHttpReceipt(signHttpReceipt(exampleReceiptBody({ verdict: verdict as never }), signer), { trustedKeys })
    t.equal(v.result, result)
    t.equal(v.ok, true)
    t.equal(v.authorized, authorized)
  }
})

t.test('store columns are read off the receipt: tool name as in the core form, cancel filed as cancelled', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ verdict: { verdict: 'cancel', reason: 'timeout' } as never, capability_id: 'cap-orders' }), signer)
  t.same(httpReceiptColumns(r), {
    receiptId: r.id,
    timestamp: r.timestamp,
    requestId: r.request_id,
    method: r.method,
    routePattern: r.route_pattern,
    toolServer: 'http',
    toolName: `${r.method} ${r.route_pattern}`,
    outcome: 'cancelled',
    capabilityId: 'cap-orders',
  })
  const { capability_id: _dropped, ...withoutCapability } = exampleReceiptBody()
  t.equal(httpReceiptColumns(signHttpReceipt(withoutCapability, signer)).capabilityId, null, 'no capability: null, never undefined')
  t.equal(httpReceiptColumns(signHttpReceipt(exampleReceiptBody(), signer)).capabilityId, null, 'a null capability_id: null')
})

t.test('an untrusted signer: signature valid, not trusted, not ok', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), exampleSigner('ed25519', 3))
  const c = checkHttpReceipt(r, { trustedKeys })
  t.equal(c.response.signature_valid, true)
  t.equal(c.response.signer_trusted, false)
  t.equal(c.response.ok, false)
  t.equal(c.failedStep, 'signer')
})

t.test('flipping any single signed field fails at the receipt id step', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ capability_id: 'cap-1', session_id: 's-1' }), signer)
  const mutations: Record<string, unknown> = {
    request_id: 'other',
    route_pattern: '/pets',
    method: 'POST',
    caller_identity_hash: 'b'.repeat(64),
    session_id: 's-2',
    verdict: { verdict: 'deny', reason: 'x', guard: 'CapabilityGuard' },
    tool_origin: 'host_executed_unmediated',
    redaction_mode: 'redacted',
    evidence: [],
    response_status: 201,
    timestamp: r.timestamp + 1,
    content_hash: 'c'.repeat(64),
    policy_hash: 'd'.repeat(64),
    capability_id: 'cap-2',
    metadata: { gate_http_status_scope: 'final' },
    extra_additive_field: 1,
  }
  for (const [field, value] of Object.entries(mutations)) {
    const c = checkHttpReceipt({ ...r, [field]: value }, { trustedKeys })
    t.equal(c.failedStep, 'receipt_id', field)
    t.equal(c.response.ok, false, field)
    t.equal(c.response.signature_valid, false, field)
  }
})

t.test('tampering with the authority semantics fails at the semantics step first', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  for (const [field, value] of [['receipt_kind', 'advisory_evaluation'], ['boundary_class', 'advisory_only'], ['trust_level', 'advisory'], ['observation_outcome', 'x']]) {
    t.equal(checkHttpReceipt({ ...r, [field]: value }, { trustedKeys }).failedStep, 'semantics', field)
  }
})

t.test('a re-hashed id with the old signature fails at the signature step', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  const forged = { ...r, response_status: 500 } as Record<string, unknown>
  const { id: _id, signature: _s, ...body } = forged
  forged.id = sha256Hex(canonicalJson(body))
  t.equal(checkHttpReceipt(forged, { trustedKeys }).failedStep, 'signature')
})

t.test('flipping any byte of the signature or of the key fails verification', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  const flip = (hex: string, i: number) => hex.slice(0, i) + ((parseInt(hex[i]!, 16) ^ 1).toString(16)) + hex.slice(i + 1)
  for (let i = 0; i < r.signature.length; i += 7) {
    t.equal(checkHttpReceipt({ ...r, signature: flip(r.signature, i) }, { trustedKeys }).response.signature_valid, false, `signature nibble ${i}`)
  }
  for (let i = 0; i < r.kernel_key.length; i += 5) {
    // the key is signed too, so a new key changes the id first: re-sign-free forgery must fail somewhere
    const c = checkHttpReceipt({ ...r, kernel_key: flip(r.kernel_key, i) }, { trustedKeys: [flip(r.kernel_key, i)] })
    t.equal(c.response.ok, false, `key nibble ${i}`)
  }
})

t.test('malformed content_hash makes parameter_hash_valid false', async t => {
  const r = signHttpReceipt(exampleReceiptBody({ content_hash: 'ABC' }), signer)
  const c = checkHttpReceipt(r, { trustedKeys })
  t.equal(c.response.parameter_hash_valid, false)
  t.equal(c.response.signature_valid, true)
  t.equal(c.failedStep, 'parameter_hash')
})

t.test('garbage never throws', async t => {
  for (const g of [null, 1, 'x', [], {}, { signature: 5 }, { receipt_kind: 'mediated_decision', boundary_class: 'prevent', trust_level: 'mediated', id: 1 }]) {
    const v = verifyHttpReceipt(g, { trustedKeys })
    t.equal(v.ok, false)
  }
})

t.test('P-256 and P-384 receipts sign and verify on both backends', async t => {
  for (const alg of ['p256', 'p384'] as const) {
    for (const signBackend of ['node', 'noble'] as const) {
      const s = exampleSigner(alg, 5, signBackend)
      t.match(s.publicKey, new RegExp(`^${alg}:04[0-9a-f]{${alg === 'p256' ? 128 : 192}}$`))
      const r = signHttpReceipt(exampleReceiptBody(), s)
      t.match(r.signature, new RegExp(`^${alg}:30`))
      for (const b of ['node', 'noble'] as const) {
        t.ok(verifyHttpReceipt(r, { trustedKeys: [s.publicKey], backend: b }).ok, `${alg} signed by ${signBackend}, verified by ${b}`)
        t.notOk(verifyHttpReceipt({ ...r, signature: r.signature.replace(/.$/, c => (c === '0' ? '1' : '0')) }, { trustedKeys: [s.publicKey], backend: b }).signature_valid)
      }
    }
  }
})

t.test('Ed25519 backends produce identical receipts and agree on verification', async t => {
  const a = signHttpReceiptJson(exampleReceiptBody(), exampleSigner('ed25519', 7, 'node')).json
  const b = signHttpReceiptJson(exampleReceiptBody(), exampleSigner('ed25519', 7, 'noble')).json
  t.equal(a, b)
  const r = JSON.parse(a) as HttpReceipt
  t.ok(verifyHttpReceipt(r, { trustedKeys, backend: 'noble' }).ok)
  t.ok(verifyHttpReceipt(r, { trustedKeys, backend: 'node' }).ok)
})

t.test('property: sign then verify round-trips for arbitrary receipt contents', async () => {
  fc.assert(
    fc.property(
      fc.record({
        request_id: fc.string(),
        route_pattern: fc.string(),
        path: fc.string(),
        response_status: fc.integer({ min: 100, max: 599 }),
        timestamp: fc.integer({ min: 0, max: 2 ** 40 }),
        metadata: fc.option(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), { nil: null }),
        capability_id: fc.option(fc.string(), { nil: null }),
      }),
      x => {
        const { path: _p, ...fields } = x
        const r = signHttpReceipt(exampleReceiptBody(fields as never), signer)
        const parsed = JSON.parse(JSON.stringify(r))
        return verifyHttpReceipt(parsed, { trustedKeys }).ok
      },
    ),
    { numRuns: 200 },
  )
})

t.test('the off-thread check answers exactly as the inline one, step for step', async t => {
  const r = signHttpReceipt(exampleReceiptBody(), signer)
  const { id: _id, signature: _s, ...body } = { ...r, response_status: 500 }
  const cases: [string, unknown, string[]][] = [
    ['genuine', r, trustedKeys],
    ['untrusted signer', signHttpReceipt(exampleReceiptBody(), exampleSigner('ed25519', 3)), trustedKeys],
    ['a signed field changed', { ...r, method: 'POST' }, trustedKeys],
    ['semantics changed', { ...r, trust_level: 'advisory' }, trustedKeys],
    ['id re-hashed, old signature', { ...body, id: sha256Hex(canonicalJson(body)), signature: r.signature }, trustedKeys],
    ['signature flipped', { ...r, signature: r.signature.replace(/.$/, c => (c === '0' ? '1' : '0')) }, trustedKeys],
    ['signature not hex', { ...r, signature: 'zz' }, trustedKeys],
    ['malformed content_hash', signHttpReceipt(exampleReceiptBody({ content_hash: 'ABC' }), signer), trustedKeys],
    ['P-256', signHttpReceipt(exampleReceiptBody(), exampleSigner('p256', 5)), [exampleSigner('p256', 5).publicKey]],
    ['P-384', signHttpReceipt(exampleReceiptBody(), exampleSigner('p384', 5)), [exampleSigner('p384', 5).publicKey]],
    ['garbage', { signature: 5 }, trustedKeys],
    ['not an object', 'x', trustedKeys],
  ]
  for (const [what, receipt, keys] of cases) {
    t.same(await checkHttpReceiptOffThread(receipt, { trustedKeys: keys }), checkHttpReceipt(receipt, { trustedKeys: keys }), what)
  }
  t.equal((await checkHttpReceiptOffThread(r, { trustedKeys })).response.ok, true)
})

/** A receipt's text as the sidecar sends it (canonical), and the same receipt written in other ways. */
function receiptTexts(json: string): [string, string][] {
  const value = JSON.parse(json) as Record<string, unknown>
  const reversed = Object.fromEntries(Object.entries(value).reverse())
  return [
    ['canonical', json],
    ['pretty-printed', JSON.stringify(value, null, 2)],
    ['members in another order', JSON.stringify(reversed)],
    ['a letter escaped', json.replace('"mediated"', '"medi\\u0061ted"')],
    ['a number written 200.0', json.replace('"response_status":200', '"response_status":200.0')],
  ]
}

t.test('over the received text, canonical or not, the check answers exactly as over the parsed receipt', async t => {
  const genuine = signHttpReceiptJson(exampleReceiptBody({ response_status: 200 }), signer).json
  const other = signHttpReceiptJson(exampleReceiptBody({ response_status: 200 }), exampleSigner('ed25519', 3)).json
  const tampered = (json: string) => {
    const value = JSON.parse(json) as Record<string, unknown>
    return canonicalJson({ ...value, verdict: { verdict: 'deny', reason: 'x', guard: 'G', http_status: 403 } })
  }
  const cases: [string, string, readonly string[]][] = [
    ...receiptTexts(genuine).map(([what, text]) => [`genuine, ${what}`, text, trustedKeys] as [string, string, string[]]),
    ...receiptTexts(other).map(([what, text]) => [`untrusted signer, ${what}`, text, trustedKeys] as [string, string, string[]]),
    ['a signed member changed, canonical, old id and signature', tampered(genuine), trustedKeys],
    ['id re-hashed over a changed member, old signature', (() => {
      const { id: _id, signature, ...body } = JSON.parse(tampered(genuine)) as Record<string, unknown>
      return canonicalJson({ ...body, id: sha256Hex(canonicalJson(body)), signature })
    })(), trustedKeys],
    ['signature flipped', genuine.replace(/"signature":"(.)/, (_m, c: string) => `"signature":"${c === '0' ? '1' : '0'}`), trustedKeys],
    ['semantics changed', genuine.replace('"trust_level":"mediated"', '"trust_level":"advisory"'), trustedKeys],
  ]
  for (const [what, text, keys] of cases) {
    const receipt = JSON.parse(text) as unknown
    const expected = checkHttpReceipt(receipt, { trustedKeys: keys })
    t.same(checkHttpReceipt(receipt, { trustedKeys: keys, receiptText: text }), expected, `${what}: inline`)
    t.same(await checkHttpReceiptOffThread(receipt, { trustedKeys: keys, receiptText: text }), expected, `${what}: off the thread`)
  }
  t.equal(checkHttpReceipt(JSON.parse(genuine), { trustedKeys, receiptText: genuine }).response.ok, true, 'the genuine canonical text verifies')
  t.equal(checkHttpReceipt(JSON.parse(receiptTexts(genuine)[1]![1]), { trustedKeys, receiptText: receiptTexts(genuine)[1]![1] }).response.ok, true, 'so does its pretty-printed text, re-canonicalized')
})

t.test('a text holding another signature than the parsed receipt is not used', async t => {
  const a = signHttpReceiptJson(exampleReceiptBody({ response_status: 200 }), signer)
  const b = signHttpReceiptJson(exampleReceiptBody({ response_status: 403, verdict: { verdict: 'deny', reason: 'no', guard: 'G', http_status: 403 } }), signer)
  // b's text beside a's parsed receipt (a caller that broke the "same bytes" rule): a is checked, over a
  const check = checkHttpReceipt(a.receipt, { trustedKeys, receiptText: b.json })
  t.same(check, checkHttpReceipt(a.receipt, { trustedKeys }))
  t.equal(check.response.result, 'allow')
})

t.test('property: over arbitrary canonical receipt texts the two paths agree', async () => {
  fc.assert(
    fc.property(
      fc.record({
        request_id: fc.string({ unit: 'binary', maxLength: 12 }),
        route_pattern: fc.string({ maxLength: 12 }),
        response_status: fc.integer({ min: 100, max: 599 }),
        metadata: fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' })), { nil: null }),
      }),
      fields => {
        const { json } = signHttpReceiptJson(exampleReceiptBody(fields as never), signer)
        const receipt = JSON.parse(json) as unknown
        const fast = checkHttpReceipt(receipt, { trustedKeys, receiptText: json })
        return fast.response.ok && JSON.stringify(fast) === JSON.stringify(checkHttpReceipt(receipt, { trustedKeys }))
      },
    ),
    { numRuns: 300, seed: 33 },
  )
})
