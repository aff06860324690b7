// The explorer's in-browser verification (trust/ui/receipt-verify.js), run here on Node's WebCrypto and
// the ML-DSA-65 modules trust-control serves (loaded as the page loads them: the served assets, written
// to a folder and imported from there): the public canonical-JSON vectors, core receipts signed by
// @gate/sdk verified, tampered, signed by an untrusted key, of every key algorithm (a hybrid verified,
// a flipped byte in either half not), and a receipt trust-control reported unverified (a real `gate
// trust serve` answer, as the explorer reads it). The browser test
// (sidecar/src/cli/receipt-explorer.test.ts) runs the same modules in Chromium.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { canonicalJson as sdkCanonicalJson, checkHttpReceipt, createSignerFromKey, generateSigningKey, signHttpReceiptJson, toCoreReceiptWithKeypair, verifyCoreReceipt } from '@gate/sdk'
import { exampleReceiptBody, exampleSigner } from '@gate/sdk/testing'
import { ReceiptQueryEngine } from '../receipt-query.js'
import type { CorpusRow, ReceiptCorpusPort } from '../ports.js'
import { loadUiAssets } from './ui.js'

type Verification = { state: 'verified' | 'not_verified' | 'unchecked'; detail: string }
interface VerifyModule {
  canonicalJson(value: unknown): string
  verifyReceipt(receipt: unknown, trustedKeys: string[]): Promise<Verification>
  refusedByServer(receipt: unknown, unverified: unknown): Verification | undefined
}

const served = t.testdir()
for (const [name, asset] of loadUiAssets()) writeFileSync(join(served, name), asset.body)
const { canonicalJson, verifyReceipt, refusedByServer } = (await import(pathToFileURL(join(served, 'receipt-verify.js')).href)) as VerifyModule
const vectors = process.env.GATE_VECTORS_DIR ?? new URL('../../../../shared/vectors/', import.meta.url).pathname
// JSON.parse (all a browser has) rounds integers beyond 2^53: those three vectors need a bigint parser
const BIG_INTEGER_CASES = ['i64_signed_boundaries', 'u64_above_i64_max', 'integer_above_double_precision']

t.test('canonical JSON reproduces the public vectors JSON.parse can carry', async t => {
  const { cases } = JSON.parse(readFileSync(`${vectors}/canonical/v1.json`, 'utf8')) as { cases: { id: string; input_json: string; canonical_json: string }[] }
  const carried = cases.filter(c => !BIG_INTEGER_CASES.includes(c.id))
  t.equal(carried.length, cases.length - BIG_INTEGER_CASES.length)
  for (const c of carried) t.equal(canonicalJson(JSON.parse(c.input_json)), c.canonical_json, c.id)
})

function coreReceipt(): Record<string, unknown> {
  const signer = exampleSigner()
  const http = signHttpReceiptJson(exampleReceiptBody(), signer)
  return JSON.parse(sdkCanonicalJson(toCoreReceiptWithKeypair(http.receipt, signer))) as Record<string, unknown>
}

t.test('a core receipt signed by a trusted key is verified, as the SDK verifies it', async t => {
  const receipt = coreReceipt()
  const key = receipt.kernel_key as string
  t.equal(verifyCoreReceipt(receipt, { trustedKeys: [key] }).ok, true, 'the SDK agrees')
  t.match(await verifyReceipt(receipt, [key]), { state: 'verified' })
})

t.test('tampering, an untrusted signer or a broken signature is never verified', async t => {
  const receipt = coreReceipt()
  const key = receipt.kernel_key as string
  const decision = receipt.decision as Record<string, unknown>
  t.match(await verifyReceipt({ ...receipt, decision: { ...decision, verdict: decision.verdict === 'allow' ? 'deny' : 'allow' } }, [key]), { state: 'not_verified', detail: /id is not the hash/ })
  t.match(await verifyReceipt({ ...receipt, policy_hash: 'f'.repeat(64) }, [key]), { state: 'not_verified' })
  const signature = receipt.signature as string
  const flipped = (signature[0] === '0' ? '1' : '0') + signature.slice(1)
  t.match(await verifyReceipt({ ...receipt, signature: flipped }, [key]), { state: 'not_verified', detail: /signature does not verify/ })
  t.match(await verifyReceipt(receipt, ['a'.repeat(64)]), { state: 'not_verified', detail: /not a trusted authority key/ })
  t.match(await verifyReceipt(receipt, []), { state: 'not_verified' })
  t.match(await verifyReceipt({ ...receipt, id: undefined }, [key]), { state: 'not_verified' })
  t.match(await verifyReceipt([receipt], [key]), { state: 'not_verified', detail: 'not a JSON object' })
})

t.test('an HttpReceipt served as stored is checked as spec 02 signs it, as the SDK checks it', async t => {
  const signer = exampleSigner()
  const { receipt, json } = signHttpReceiptJson(exampleReceiptBody(), signer)
  const served = JSON.parse(json) as Record<string, unknown>
  t.equal(checkHttpReceipt(receipt, { trustedKeys: [signer.publicKey] }).response.ok, true, 'the SDK agrees')
  t.match(await verifyReceipt(served, [signer.publicKey]), { state: 'verified' })
  t.match(await verifyReceipt(served, ['a'.repeat(64)]), { state: 'not_verified', detail: /not a trusted authority key/ })
  t.match(await verifyReceipt({ ...served, method: 'GEt' }, [signer.publicKey]), { state: 'not_verified', detail: /id is not the hash/ })
  t.match(await verifyReceipt({ ...served, trust_level: 'advisory' }, [signer.publicKey]), { state: 'not_verified', detail: /trust_level must be mediated/ })
  const signature = served.signature as string
  t.match(await verifyReceipt({ ...served, signature: (signature[0] === '0' ? '1' : '0') + signature.slice(1) }, [signer.publicKey]), { state: 'not_verified', detail: /signature does not verify/ })
  // a null observation_outcome is no member of the signed body (spec 02), so adding one changes nothing
  t.match(await verifyReceipt({ ...served, observation_outcome: null }, [signer.publicKey]), { state: 'verified' })
})

t.test('every key algorithm verifies; a flipped byte in either half of a hybrid or another alg_set does not', async t => {
  // a byte of the signature's hex flipped, at `at` characters from the start of the half it is in
  const flip = (hex: string, at: number) => hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1)
  const names = { p256: 'P-256', p384: 'P-384', 'ed25519+mldsa65': 'Ed25519', 'p256+mldsa65': 'P-256', 'p384+mldsa65': 'P-384' } as const
  for (const [name, label] of Object.entries(names)) {
    const signer = createSignerFromKey(generateSigningKey(name as keyof typeof names))
    const http = signHttpReceiptJson(exampleReceiptBody(), signer)
    const core = JSON.parse(sdkCanonicalJson(toCoreReceiptWithKeypair(http.receipt, signer))) as Record<string, unknown>
    for (const [form, receipt] of [['http', JSON.parse(http.json) as Record<string, unknown>], ['core', core]] as const) {
      const signature = receipt.signature as string
      if (name.includes('+')) {
        const [, classical, mldsa, algSet] = signature.split(':') as [string, string, string, string]
        t.match(await verifyReceipt(receipt, [signer.publicKey]), { state: 'verified', detail: new RegExp(`${label} \\+ ML-DSA-65 hybrid signature \\(both halves\\) check`) }, `${name} ${form}: both halves verified`)
        const badClassical = `hybrid:${flip(classical, classical.length - 10)}:${mldsa}:${algSet}`
        t.match(await verifyReceipt({ ...receipt, signature: badClassical }, [signer.publicKey]), { state: 'not_verified', detail: /classical .* half of the hybrid signature does not verify/ }, `${name} ${form}: a flipped classical byte`)
        for (const at of [100, mldsa.length - 10]) {
          const badMlDsa = `hybrid:${classical}:${flip(mldsa, at)}:${algSet}`
          t.match(await verifyReceipt({ ...receipt, signature: badMlDsa }, [signer.publicKey]), { state: 'not_verified', detail: /ML-DSA-65 half of the hybrid signature does not verify/ }, `${name} ${form}: a flipped ML-DSA-65 byte at ${at}`)
        }
        t.match(await verifyReceipt({ ...receipt, signature: `hybrid:${classical}:${mldsa.slice(0, -2)}:${algSet}` }, [signer.publicKey]), { state: 'not_verified' }, `${name} ${form}: a short ML-DSA-65 half`)
        t.match(await verifyReceipt({ ...receipt, signature: `hybrid:${classical}:${mldsa}:${algSet === 'p384+mldsa65' ? 'p256+mldsa65' : 'p384+mldsa65'}` }, [signer.publicKey]), { state: 'not_verified' }, `${name} ${form}: another alg_set`)
        t.match(await verifyReceipt(receipt, ['a'.repeat(64)]), { state: 'not_verified', detail: /not a trusted authority key/ }, `${name} ${form}: an untrusted key`)
      } else {
        t.match(await verifyReceipt(receipt, [signer.publicKey]), { state: 'verified', detail: new RegExp(`${label} signature check`) }, `${name} ${form}`)
        t.match(await verifyReceipt({ ...receipt, signature: flip(signature, signature.length - 10) }, [signer.publicKey]), { state: 'not_verified', detail: /signature does not verify/ }, `${name} ${form}: a flipped byte`)
        t.match(await verifyReceipt({ ...receipt, signature: signature.slice(5) }, [signer.publicKey]), { state: 'not_verified' }, `${name} ${form}: without its prefix`)
      }
    }
  }
})

t.test('a receipt trust-control reports unverified is shown not verified, with its failing step', async t => {
  const signer = exampleSigner()
  const good = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-good' }), signer)
  const victim = signHttpReceiptJson(exampleReceiptBody({ request_id: 'req-victim' }), signer)
  const row = (seq: number, receiptId: string, httpJson: string): CorpusRow => ({
    seq, receiptId, timestamp: 0, tenant: null, outcome: 'allow', capabilityId: null, subjectKey: null, toolServer: 'http', toolName: 'GET /pets/{id}', costUnits: null, costCurrency: null, attemptedCostUnits: null, httpJson, coreJson: null,
  })
  const rows = [row(1, good.receipt.id, good.json), row(2, victim.receipt.id, victim.json.replace('"method":"GET"', '"method":"GEt"')), row(3, 'c'.repeat(64), 'not json')]
  const corpus = { latestSeq: async () => 3, queryPage: async () => rows, countMatching: async () => 3, setCoreJson: async () => true } as unknown as ReceiptCorpusPort
  const engine = new ReceiptQueryEngine({
    corpus,
    lineage: { idsForSubject: async () => [], subjectsOf: async () => new Map() },
    authority: { signer: () => signer, status: () => ({ publicKey: signer.publicKey, generation: 1, rotatedAt: null, trustedPublicKeys: [signer.publicKey] }) },
    log: () => {},
  })
  // the response text the explorer fetches, parsed as the browser parses it
  const body = JSON.parse((await engine.query({ filter: {}, cursor: 0, limit: 50, impossible: false }, { kind: 'admin' })).json) as { receipts: unknown[]; unverifiedReceipts: unknown[] }
  const [core, stored, unreadable] = body.receipts
  t.equal(refusedByServer(core, body.unverifiedReceipts), undefined, 'a receipt not listed: the page checks it itself')
  t.match(await verifyReceipt(core, [signer.publicKey]), { state: 'verified' })
  t.match(refusedByServer(stored, body.unverifiedReceipts), { state: 'not_verified', detail: /trust-control found it does not verify \(receipt_id: / })
  t.equal(unreadable, null, 'a stored text that is not JSON is served as null')
  t.match(await verifyReceipt(unreadable, [signer.publicKey]), { state: 'not_verified' })
  t.equal(refusedByServer(stored, undefined), undefined, 'no member: nothing refused')
})
