// Before a key rotation (@gate/trust's storeCoreForms over the SQLite receipt store): the rows the retiring
// key signed get their core form stored once they verify; rows of another key, rows already converted and
// rows that do not verify are left as they are.
import t from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret, signHttpReceiptJson, verifyCoreReceipt, type Signer } from '@gate/sdk'
import { createReceiptRow } from '@gate/trust'
import { storeCoreForms } from '@gate/trust/server'
import { receiptBody } from '@gate/trust/testing'
import { openReceiptStore, RECEIPT_TRUST_INDEXES } from './index.js'

function signed(n: number, signer: Signer) {
  return signHttpReceiptJson(receiptBody(n, { metadata: null }), signer)
}

for (const indexed of [true, false]) {
  t.test(`the retiring key's rows get their core form, others keep theirs (${indexed ? 'with' : 'without'} the trust indexes)`, async t => {
    const store = await openReceiptStore(join(t.testdir(), 'receipts.db'))
    t.teardown(() => store.close())
    if (indexed) await store.log.createIndexes(RECEIPT_TRUST_INDEXES)
    const retiring = createSigner({ secret: generateSecret() })
    const other = createSigner({ secret: generateSecret() })
    const rows = Array.from({ length: 300 }, (_, n) => {
      const r = signed(n, n % 3 === 0 ? other : retiring)
      return createReceiptRow(r.receipt, r.json, { coreJson: n % 5 === 0 ? '{"kept":true}' : null })
    })
    rows.push({ ...createReceiptRow(signed(300, retiring).receipt, `{"kernel_key":"${retiring.publicKey}"}`), coreJson: null })
    // one byte of a stored receipt changed after it was written: it must not be signed
    const altered = signed(301, retiring)
    rows.push(createReceiptRow(altered.receipt, altered.json.replace('"method":"POST"', '"method":"POSt"')))
    await store.log.appendMany(rows)
    const refusals: string[] = []
    const done = await storeCoreForms(store, retiring, { trustedKeys: [retiring.publicKey], onUnverified: step => refusals.push(step) })
    const stored = []
    for await (const row of store.query.iterate()) stored.push(row)
    const expected = stored.filter((_, n) => n < 300 && n % 3 !== 0 && n % 5 !== 0)
    t.equal(done.stored, expected.length)
    t.equal(done.unverified, 2, 'a row that cannot be read and an altered row are counted and left')
    t.same(refusals, ['shape', 'receipt_id'])
    t.equal(done.invalid, 0)
    t.equal(stored[301]!.coreJson, null, 'the altered row keeps its HTTP form only: nothing signed over it')
    t.ok(expected.every(row => row.coreJson !== null && verifyCoreReceipt(JSON.parse(row.coreJson), { trustedKeys: [retiring.publicKey] }).ok), 'converted rows verify under the retiring key')
    t.ok(stored.filter((_, n) => n % 5 === 0 && n < 300).every(row => row.coreJson === '{"kept":true}'), 'stored core forms are never rewritten')
    t.ok(stored.filter((_, n) => n % 3 === 0 && n % 5 !== 0).every(row => row.coreJson === null), "another key's rows keep their HTTP form")
  })
}
