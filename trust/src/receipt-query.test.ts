import t from 'tap'
import { canonicalJson, createSigner, generateSecret, signHttpReceiptJson, toCoreReceiptWithKeypair, verifyCoreReceipt, type Signer } from '@gate/sdk'
import { exampleReceiptBody, exampleSigner } from '@gate/sdk/testing'
import { isLegacyCoreForm, ReceiptQueryEngine, type UnverifiedReceipt } from './receipt-query.js'
import type { CorpusRow, ReceiptCorpusPort } from './ports.js'

const signer = exampleSigner('ed25519', 5)

function row(coreJson: string | null, http: { receipt: { id: string }; json: string }, seq = 1): CorpusRow {
  return {
    seq,
    receiptId: http.receipt.id,
    timestamp: 0,
    tenant: null,
    outcome: 'allow',
    capabilityId: null,
    subjectKey: null,
    toolServer: 'http',
    toolName: 'GET /pets/{id}',
    costUnits: null,
    costCurrency: null,
    attemptedCostUnits: null,
    httpJson: http.json,
    coreJson,
  }
}

function engineOver(trustedKeys: string[] = [signer.publicKey], by: Signer = signer) {
  const persisted: [number, string][] = []
  const refused: UnverifiedReceipt[] = []
  const corpus = { setCoreJson: async (seq: number, json: string) => void persisted.push([seq, json]) } as unknown as ReceiptCorpusPort
  const engine = new ReceiptQueryEngine({
    corpus,
    lineage: { idsForSubject: async () => [], subjectsOf: async () => new Map() } as never,
    authority: { signer: () => by, status: () => ({ publicKey: by.publicKey, generation: 1, rotatedAt: null, trustedPublicKeys: trustedKeys }) },
    log: () => {},
    onUnverified: r => refused.push(r),
  })
  return { engine, persisted, refused }
}

t.test('a core form stored with the HTTP receipt id (before content-addressed core ids) is served recomputed', async t => {
  const http = signHttpReceiptJson(exampleReceiptBody(), signer)
  const current = canonicalJson(toCoreReceiptWithKeypair(http.receipt, signer))
  const legacy = canonicalJson({ ...JSON.parse(current), id: http.receipt.id })
  t.equal(isLegacyCoreForm(legacy, http.receipt.id), true)
  t.equal(isLegacyCoreForm(current, http.receipt.id), false)
  const { engine, persisted } = engineOver()
  const { texts: [served] } = await engine.serve([row(legacy, http)])
  t.equal(served, current)
  t.match(verifyCoreReceipt(JSON.parse(served!), { trustedKeys: [signer.publicKey] }), { ok: true })
  t.same(persisted.map(([, json]) => json), [current], 'the recomputed form replaces the stored one')
  t.same((await engine.serve([row(current, http)])).texts, [current], 'a current form is served as stored')
})

t.test('a stored receipt altered by one byte is served as stored and listed unverified, never signed', async t => {
  const good = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-good' }), signer)
  const victim = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-victim' }), signer)
  const altered = { receipt: victim.receipt, json: victim.json.replace('"method":"GET"', '"method":"GEt"') }
  t.not(altered.json, victim.json)
  const { engine, persisted, refused } = engineOver()
  const served = await engine.serve([row(null, good, 1), row(null, altered, 2)])
  t.match(verifyCoreReceipt(JSON.parse(served.texts[0]!), { trustedKeys: [signer.publicKey] }), { ok: true }, 'the intact row gets its core form')
  t.equal(served.texts[1], altered.json, 'the altered row is served byte for byte as stored')
  t.match(served.unverified, [{ receiptId: victim.receipt.id, seq: 2, failedStep: 'receipt_id', detail: String }])
  t.equal(served.unverified.length, 1)
  t.same(refused, served.unverified, 'each refusal is reported (the metric)')
  t.same(persisted.map(([seq]) => seq), [1], 'no core form is persisted for the altered row')
  const again = await engine.serve([row(null, altered, 2)])
  t.equal(again.unverified.length, 1, 'a re-read checks it again')
  t.same(persisted.map(([seq]) => seq), [1])
})

t.test('each failing step is named: signature, signer, semantics, a swapped text, a text that is not JSON', async t => {
  const body = exampleReceiptBody({ request_id: 'req-steps' })
  const http = signHttpReceiptJson(body, signer)
  const signature = http.receipt.signature
  const flipped = { receipt: http.receipt, json: http.json.replace(signature, (signature[0] === '0' ? '1' : '0') + signature.slice(1)) }
  const other = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-other' }), signer)
  const swapped = { receipt: http.receipt, json: other.json }
  const garbage = { receipt: http.receipt, json: '{"id":' }
  const observation = { receipt: http.receipt, json: http.json.replace('"trust_level":"mediated"', '"trust_level":"verified"') }
  const { engine, persisted } = engineOver()
  const served = await engine.serve([row(null, flipped, 1), row(null, swapped, 2), row(null, garbage, 3), row(null, observation, 4)])
  t.same(served.unverified.map(u => [u.seq, u.failedStep]), [[1, 'signature'], [2, 'receipt_id'], [3, 'shape'], [4, 'semantics']])
  t.match(served.unverified[1]!.detail, /is not the stored receipt's id/)
  t.same(served.texts, [flipped.json, other.json, 'null', observation.json], 'as stored; a text that is not JSON is served as null, so the response stays JSON')
  t.same(persisted, [])

  // the current key no longer among the trusted ones (a signer check that can fail)
  const untrusted = engineOver(['a'.repeat(64)])
  const refused = await untrusted.engine.serve([row(null, http, 4)])
  t.same(refused.unverified.map(u => u.failedStep), ['signer'])
  t.same(untrusted.persisted, [])
})

t.test('a row another key signed is served as stored: not signed, not listed', async t => {
  const foreign = createSigner({ secret: generateSecret() })
  const http = signHttpReceiptJson(exampleReceiptBody(), foreign)
  const altered = { receipt: http.receipt, json: http.json.replace('"method":"GET"', '"method":"GEt"') }
  const { engine, persisted } = engineOver()
  const served = await engine.serve([row(null, altered)])
  t.same(served, { texts: [altered.json], unverified: [] })
  t.same(persisted, [])
})
