import t from 'tap'
import { createSigner, prepareHttpReceipt, signHttpReceiptJson, utf8, verifyHttpReceipt, type SignedHttpReceipt } from '@gate/sdk'
import { exampleReceiptBody } from '@gate/sdk/testing'
import { inlineTextSigner, startSigningThread, startWorkerSigner } from './worker-signer.js'

const seed = new Uint8Array(32).fill(9)
const inline = createSigner({ secret: seed })

t.test('the signing thread signs exactly what the inline signer signs, in order, across batches', async t => {
  const worker = await startWorkerSigner(seed, inline, { offload: () => true })
  t.teardown(() => worker.close())
  t.equal(worker.publicKey, inline.publicKey)
  const texts = Array.from({ length: 300 }, (_, i) => `{"n":${i},"text":"receipt ${'x'.repeat(i % 17)}"}`)
  // a burst in one turn (one batch) and then one per turn (many batches)
  const burst = await Promise.all(texts.slice(0, 200).map(text => worker.signText(text)))
  const trickle: string[] = []
  for (const text of texts.slice(200)) trickle.push(await worker.signText(text))
  t.same([...burst, ...trickle], texts.map(text => inline.sign(utf8(text))))
})

t.test('a receipt signed through the thread verifies', async t => {
  const worker = await startWorkerSigner(seed, inline, { offload: () => true })
  t.teardown(() => worker.close())
  const prepared = prepareHttpReceipt(exampleReceiptBody(), worker.publicKey)
  const signed: SignedHttpReceipt = prepared.attach(await worker.signText(prepared.signingInput))
  const check = verifyHttpReceipt(JSON.parse(signed.json), { trustedKeys: [inline.publicKey] })
  t.equal(check.signature_valid, true)
  t.equal(check.signer_trusted, true)
  t.equal(check.receipt_id_valid, true)
})

t.test('after close, signing goes on on the calling thread', async t => {
  const worker = await startWorkerSigner(seed, inline, { offload: () => true })
  const pending = worker.signText('before close')
  await worker.close()
  t.equal(await pending, inline.sign(utf8('before close')), 'a batch already sent comes back before the thread stops')
  t.equal(await worker.signText('after close'), inline.sign(utf8('after close')))
  await worker.close()
})

t.test('a thread that cannot start leaves every text to the calling thread, and says so', async t => {
  const lines: string[] = []
  // a seed the thread's signer refuses: the thread answers not ready
  const worker = await startWorkerSigner(new Uint8Array(5), inline, { log: line => lines.push(line), offload: () => true })
  t.match(lines, [/^the signing thread did not start: .+; receipts are signed on the main thread$/])
  t.equal(await worker.signText('still signed'), inline.sign(utf8('still signed')))
  await worker.close()
})

t.test('a thread that dies with a batch in flight fails that batch closed; later texts are signed on the calling thread', async t => {
  let logged!: (line: string) => void
  const firstLine = new Promise<string>(resolve => (logged = resolve))
  const exiting = new URL('../testing/exiting-signing-thread.js', import.meta.url)
  const worker = await startSigningThread(exiting, seed, inline, { log: line => logged(line), offload: () => true })
  await t.rejects(worker.signText('in flight'), { code: 'gate_receipt_sign_failed', message: /the signing thread failed: exited with code 3/ })
  t.match(await firstLine, /^signing thread stopped \(exited with code 3\); signing goes on on the main thread$/)
  t.equal(await worker.signText('still signed'), inline.sign(utf8('still signed')))
  await worker.close()
})

t.test('inlineTextSigner signs on the calling thread', async t => {
  const signer = inlineTextSigner(inline)
  t.equal(await signer.signText('x'), inline.sign(utf8('x')))
  await signer.close()
})

t.test('the signing thread converts stored receipts to the core form the main thread would compute', async t => {
  const worker = await startWorkerSigner(seed, inline, { offload: () => true })
  t.teardown(() => worker.close())
  const own = signHttpReceiptJson(exampleReceiptBody(), inline).json
  const foreign = signHttpReceiptJson(exampleReceiptBody(), createSigner({ secret: new Uint8Array(32).fill(3) })).json
  const inputs = [own, foreign, 'not json', '{"kernel_key":1}']
  const viaThread = await worker.toCoreJsons(inputs)
  t.same(viaThread, await inlineTextSigner(inline).toCoreJsons(inputs))
  t.ok('json' in viaThread[0]!, 'own receipt converted')
  t.match(viaThread.slice(1), [{ problem: 'foreign_key' }, { problem: 'unreadable' }, { problem: 'unreadable' }])
  await worker.close()
  t.same(await worker.toCoreJsons([own]), [viaThread[0]], 'after close: converted on the calling thread')
})

t.test('with offload() false the text is signed inline, before the event loop turns', async t => {
  let offload = false
  const worker = await startWorkerSigner(seed, inline, { offload: () => offload })
  t.teardown(() => worker.close())
  const turn = new Promise<string>(resolve => setImmediate(() => resolve('turned')))
  t.equal(await Promise.race([worker.signText('now'), turn]), inline.sign(utf8('now')), 'inline: answered before setImmediate')
  offload = true
  const turn2 = new Promise<string>(resolve => setImmediate(() => resolve('turned')))
  t.equal(await Promise.race([worker.signText('later'), turn2]), 'turned', 'offloaded: waits for the batch')
})
