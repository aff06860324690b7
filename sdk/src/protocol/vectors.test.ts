// The public vectors in ../shared/vectors (canonical JSON, SHA-256, Ed25519), through the public API,
// on every crypto backend.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { canonicalJson, parseJsonExact, sha256Hex, createSigner, verifySignature, hexToBytes, utf8 } from '../index.js'

const dir = process.env.GATE_VECTORS_DIR ?? new URL('../../../../shared/vectors/', import.meta.url).pathname
const load = (name: string) => JSON.parse(readFileSync(`${dir}/${name}/v1.json`, 'utf8'))
const backends = ['node', 'noble'] as const

t.test('canonical vectors reproduce exactly, big integers included', async t => {
  const { cases } = load('canonical') as { cases: { id: string; input_json: string; canonical_json: string }[] }
  t.equal(cases.length, 20)
  for (const c of cases) t.equal(canonicalJson(parseJsonExact(c.input_json)), c.canonical_json, c.id)
})

t.test('integers beyond double precision are kept as bigint, never rounded', async t => {
  const { cases } = load('canonical') as { cases: { id: string; input_json: string }[] }
  const big = cases.filter(c => ['i64_signed_boundaries', 'u64_above_i64_max', 'integer_above_double_precision'].includes(c.id))
  t.equal(big.length, 3)
  for (const c of big) {
    const v = parseJsonExact(c.input_json) as Record<string, unknown>
    for (const n of Object.values(v)) t.equal(typeof n, 'bigint', `${c.id} parses to bigint`)
    // the same text through JSON.parse would change the number: that is what the bigint path prevents
    t.not(canonicalJson(JSON.parse(c.input_json)), canonicalJson(v), `${c.id} differs via JSON.parse`)
  }
})

t.test('hashing vectors on every backend', async t => {
  const { cases } = load('hashing') as { cases: { id: string; input_utf8: string; sha256_hex: string }[] }
  t.equal(cases.length, 20)
  for (const b of backends) for (const c of cases) t.equal(sha256Hex(c.input_utf8, b), c.sha256_hex, `${b} ${c.id}`)
})

t.test('signing vectors: deterministic signatures and verification on every backend', async t => {
  const v = load('signing') as {
    signing_key_seed_hex: string
    json_cases: { id: string; input_json: string; canonical_json: string; public_key_hex: string; signature_hex: string; expected_verify: boolean; signing_key_seed_hex?: string }[]
    utf8_cases: { id: string; input_utf8: string; public_key_hex: string; signature_hex: string; expected_verify: boolean; signing_key_seed_hex?: string }[]
  }
  t.equal(v.json_cases.length + v.utf8_cases.length, 22)
  const all = [
    ...v.json_cases.map(c => {
      t.equal(canonicalJson(parseJsonExact(c.input_json)), c.canonical_json, `${c.id} canonical`)
      return { ...c, message: utf8(canonicalJson(parseJsonExact(c.input_json))) }
    }),
    ...v.utf8_cases.map(c => ({ ...c, message: utf8(c.input_utf8) })),
  ]
  for (const b of backends) {
    for (const c of all) {
      const signer = createSigner({ secret: hexToBytes(c.signing_key_seed_hex ?? v.signing_key_seed_hex)!, backend: b })
      t.equal(signer.publicKey, c.public_key_hex, `${b} ${c.id} public key`)
      t.equal(verifySignature(c.public_key_hex, c.message, c.signature_hex, b), c.expected_verify, `${b} ${c.id} verify`)
      if (c.expected_verify) t.equal(signer.sign(c.message), c.signature_hex, `${b} ${c.id} signature`)
      else t.not(signer.sign(c.message), c.signature_hex, `${b} ${c.id} tampered message signs differently`)
    }
  }
})
