import t from 'tap'
import { canonicalJson, signHttpReceiptJson, toCoreReceiptWithKeypair, verifyCoreReceipt } from '@gate/sdk'
import { exampleReceiptBody, exampleSigner } from '@gate/sdk/testing'
import { isLegacyCoreForm, ReceiptQueryEngine } from './receipt-query.js'
import type { CorpusRow, ReceiptCorpusPort } from './ports.js'

const signer = exampleSigner('ed25519', 5)

function row(coreJson: string | null, http: { receipt: { id: string }; json: string }): CorpusRow {
  return {
    seq: 1,
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

t.test('a core form stored with the HTTP receipt id (before content-addressed core ids) is served recomputed', async t => {
  const http = signHttpReceiptJson(exampleReceiptBody(), signer)
  const current = canonicalJson(toCoreReceiptWithKeypair(http.receipt, signer))
  const legacy = canonicalJson({ ...JSON.parse(current), id: http.receipt.id })
  t.equal(isLegacyCoreForm(legacy, http.receipt.id), true)
  t.equal(isLegacyCoreForm(current, http.receipt.id), false)
  const persisted: string[] = []
  const corpus = { setCoreJson: async (_seq: number, json: string) => void persisted.push(json) } as unknown as ReceiptCorpusPort
  const engine = new ReceiptQueryEngine({ corpus, lineage: { idsForSubject: async () => [], subjectsOf: async () => new Map() } as never, authority: { signer: () => signer }, log: () => {} })
  const [served] = await engine.servedTexts([row(legacy, http)])
  t.equal(served, current)
  t.match(verifyCoreReceipt(JSON.parse(served!), { trustedKeys: [signer.publicKey] }), { ok: true })
  t.same(persisted, [current], 'the recomputed form replaces the stored one')
  t.same(await engine.servedTexts([row(current, http)]), [current], 'a current form is served as stored')
})
