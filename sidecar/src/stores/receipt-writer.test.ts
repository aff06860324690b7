// The inline receipt writer over a real receipt store: a write resolves with a signed receipt whose row
// is committed byte for byte, signs with the signer current at the write, and fails closed.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { canonicalJson, createSigner, generateSecret, verifyCoreReceipt, verifyHttpReceipt, type Signer } from '@gate/sdk'
import { openReceiptStore } from './receipt-store.js'
import { createInlineReceiptWriter } from './receipt-writer.js'

import { coreReceiptDraft, receiptBody as body, STORE_DRIVER as driver } from '../testing/receipt-rows.js'

async function setup(t: Test, signer: () => Signer) {
  const store = await openReceiptStore(join(t.testdir(), 'receipts.db'), { driver })
  t.teardown(() => store.close())
  return { store, writer: createInlineReceiptWriter({ signer, log: store.log }) }
}

t.test('a write resolves with the signed receipt once its row is committed, stored byte for byte with its context', async t => {
  const signer = createSigner({ secret: generateSecret() })
  const { store, writer } = await setup(t, () => signer)
  const written = await writer.write(body(1), { tenant: 'acme', subjectKey: 'e'.repeat(64) })
  t.ok(verifyHttpReceipt(written.receipt, { trustedKeys: [signer.publicKey] }).ok, 'signed by the authority')
  t.equal(written.seq, 1)
  t.match(await store.query.getById(written.receipt.id), { seq: 1, httpJson: written.json, tenant: 'acme', subjectKey: 'e'.repeat(64), kind: 'decision', coreJson: null })
  const seqs = (await Promise.all([2, 3, 4].map(n => writer.write(body(n))))).map(w => w.seq)
  t.same(seqs.sort(), [2, 3, 4], 'concurrent writes share the group commit')
})

t.test('each write signs with the signer current at the time (a rotation changes it)', async t => {
  let signer = createSigner({ secret: generateSecret() })
  const { writer } = await setup(t, () => signer)
  const before = await writer.write(body(1))
  signer = createSigner({ secret: generateSecret() })
  const after = await writer.write(body(2))
  t.not(before.receipt.kernel_key, after.receipt.kernel_key)
  t.equal(after.receipt.kernel_key, signer.publicKey)
})

t.test('a signer that fails rejects with gate_receipt_sign_failed and stores nothing; after close writes reject', async t => {
  const good = createSigner({ secret: generateSecret() })
  let failing = true
  const { store, writer } = await setup(t, () => (failing ? { ...good, sign: () => { throw new Error('the key is gone') } } : good))
  await t.rejects(writer.write(body(1)), { code: 'gate_receipt_sign_failed' })
  t.equal(await store.query.count(), 0)
  failing = false
  const seen: number[] = []
  writer.onCommitted(batch => seen.push(batch.lastSeq))
  await writer.write(body(2))
  t.same(seen, [1], 'followers of the writer hear of its commits')
  await writer.close()
  await t.rejects(writer.write(body(3)), { code: 'gate_receipt_persistence_failed' })
})

t.test('writeCore signs a core receipt (gate.receipt.v1) and commits it without an HTTP form', async t => {
  const signer = createSigner({ secret: generateSecret() })
  const { store, writer } = await setup(t, () => signer)
  const written = await writer.writeCore(coreReceiptDraft(1), { requestId: 'call-1', tenant: 'acme' })
  t.equal(verifyCoreReceipt(written.receipt, { trustedKeys: [signer.publicKey] }).ok, true, 'verifies as a core receipt')
  t.equal(written.json, canonicalJson(written.receipt), 'stored as canonical JSON')
  t.match(await store.query.getById(written.receipt.id), { seq: written.seq, httpJson: null, coreJson: written.json, toolServer: 'fs', toolName: 'read_file', requestId: 'call-1', tenant: 'acme', outcome: 'allow' })
  const bad = createSigner({ secret: generateSecret() })
  const failing = await setup(t, () => ({ ...bad, sign: () => { throw new Error('the key is gone') } }))
  await t.rejects(failing.writer.writeCore(coreReceiptDraft(2), { requestId: 'call-2' }), { code: 'gate_receipt_sign_failed' })
})
