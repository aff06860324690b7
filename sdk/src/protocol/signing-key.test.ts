import t from 'tap'
import {
  algorithmOf,
  checkSignature,
  checkSignatureOffThread,
  createSignerFromKey,
  createSignerFromKeyBytes,
  formatSigningKey,
  generateSigningKey,
  parsePublicKey,
  parseSigningKey,
  publicKeyOfKeyBytes,
  signingKeyBytes,
  signingKeyFromBytes,
  utf8,
  verifySignature,
  KEY_ALGORITHM_NAMES,
  type KeyAlgorithmName,
} from '../index.js'

const message = utf8('{"body":{"a":1},"id":"x"}')
const backends = ['node', 'noble'] as const
const HYBRID_SETS = ['ed25519+mldsa65', 'p256+mldsa65', 'p384+mldsa65'] as const

t.test('a key of every algorithm signs, and its signature verifies on both backends', async t => {
  for (const name of KEY_ALGORITHM_NAMES) {
    const key = generateSigningKey(name)
    for (const b of backends) {
      const signer = createSignerFromKey(key, b)
      const signature = signer.sign(message)
      for (const v of backends) t.equal(verifySignature(signer.publicKey, message, signature, v), true, `${name} signed on ${b}, verified on ${v}`)
      t.equal((await checkSignatureOffThread(signer.publicKey, message, signature)).valid, true, `${name} off the thread`)
      t.equal(verifySignature(signer.publicKey, utf8('other'), signature, b), false, `${name}: another message fails`)
    }
  }
})

t.test('public keys and signatures take the spec forms, the classical half of a hybrid in bare hex', async t => {
  const forms: Record<string, RegExp> = {
    ed25519: /^[0-9a-f]{64}$/,
    p256: /^p256:04[0-9a-f]{128}$/,
    p384: /^p384:04[0-9a-f]{192}$/,
    'ed25519+mldsa65': /^hybrid:[0-9a-f]{64}:[0-9a-f]{3904}:ed25519\+mldsa65$/,
    'p256+mldsa65': /^hybrid:04[0-9a-f]{128}:[0-9a-f]{3904}:p256\+mldsa65$/,
    'p384+mldsa65': /^hybrid:04[0-9a-f]{192}:[0-9a-f]{3904}:p384\+mldsa65$/,
  }
  const signatures: Record<string, RegExp> = {
    ed25519: /^[0-9a-f]{128}$/,
    p256: /^p256:30[0-9a-f]+$/,
    p384: /^p384:30[0-9a-f]+$/,
    'ed25519+mldsa65': /^hybrid:[0-9a-f]{128}:[0-9a-f]{6618}:ed25519\+mldsa65$/,
    'p256+mldsa65': /^hybrid:30[0-9a-f]+:[0-9a-f]{6618}:p256\+mldsa65$/,
    'p384+mldsa65': /^hybrid:30[0-9a-f]+:[0-9a-f]{6618}:p384\+mldsa65$/,
  }
  for (const [name, form] of Object.entries(forms)) {
    const signer = createSignerFromKey(generateSigningKey(name as KeyAlgorithmName))
    t.match(signer.publicKey, form, `${name} key`)
    t.match(signer.sign(message), signatures[name]!, `${name} signature`)
    t.equal(algorithmOf(signer.publicKey), name.includes('+') ? 'hybrid' : name)
  }
  t.equal(createSignerFromKey(generateSigningKey('hybrid')).publicKey.endsWith(':ed25519+mldsa65'), true, 'hybrid alone is ed25519+mldsa65')
})

t.test('a flipped byte in either half of a hybrid signature fails, naming the half', async t => {
  for (const set of HYBRID_SETS) {
    const signer = createSignerFromKey(generateSigningKey(set))
    const signature = signer.sign(message)
    const [, classical, mldsa] = signature.split(':') as [string, string, string, string]
    const flip = (hex: string, at: number) => hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1)
    // the last byte of the classical half (for DER: inside s, so the encoding stays valid) and a middle byte of ML-DSA's
    const badClassical = signature.replace(`:${classical}:`, `:${flip(classical, classical.length - 1)}:`)
    const badMldsa = signature.replace(`:${mldsa}:`, `:${flip(mldsa, 3000)}:`)
    for (const b of backends) {
      t.match(checkSignature(signer.publicKey, message, badClassical, b), { valid: false, reason: /classical half/ }, `${set} classical half on ${b}`)
      t.match(checkSignature(signer.publicKey, message, badMldsa, b), { valid: false, reason: /ML-DSA-65 half/ }, `${set} ML-DSA half on ${b}`)
    }
    t.equal((await checkSignatureOffThread(signer.publicKey, message, badMldsa)).valid, false)
  }
})

t.test('one half alone, another alg_set or a classical signature never verifies a hybrid key', async t => {
  const key = generateSigningKey('p256+mldsa65')
  const hybrid = createSignerFromKey(key)
  const classicalOnly = createSignerFromKey({ algorithm: 'p256', secret: (key as { classicalSecret: Uint8Array }).classicalSecret })
  const signature = hybrid.sign(message)
  t.match(checkSignature(hybrid.publicKey, message, classicalOnly.sign(message)), { valid: false, reason: /needs a hybrid signature/ })
  t.match(checkSignature(hybrid.publicKey, message, signature.replace(/p256\+mldsa65$/, 'p384+mldsa65')), { valid: false, reason: /alg_set/ })
  t.match(checkSignature(classicalOnly.publicKey, message, signature), { valid: false, reason: /hybrid signature does not verify with a p256 key/ })
  // the classical key alone is another key: a verifier trusting the hybrid key does not trust it
  t.not(classicalOnly.publicKey, hybrid.publicKey)
})

t.test('malformed hybrid keys are refused with a reason', async t => {
  const good = createSignerFromKey(generateSigningKey('ed25519+mldsa65')).publicKey
  const [, classical, mldsa] = good.split(':')
  const cases: [string, RegExp][] = [
    [`hybrid:${classical}:${mldsa}`, /hybrid:<classical-hex>/],
    [`hybrid:${classical}:${mldsa}:ed448+mldsa65`, /unknown hybrid alg_set/],
    [`hybrid:${classical}:${mldsa!.slice(2)}:ed25519+mldsa65`, /ML-DSA-65 half/],
    [`hybrid:${classical}00:${mldsa}:ed25519+mldsa65`, /classical half/],
    [`hybrid:p256:${classical}:${mldsa}:p256+mldsa65`, /hybrid:<classical-hex>/],
  ]
  for (const [key, reason] of cases) t.match(parsePublicKey(key), { error: reason }, key.slice(0, 40))
})

t.test('key files: each algorithm round-trips through its one-line form; the old Ed25519 seed file is one', async t => {
  const seed = '07'.repeat(32)
  const legacy = parseSigningKey(`${seed}\n`)
  t.same(legacy, { algorithm: 'ed25519', secret: new Uint8Array(32).fill(7) })
  t.equal(formatSigningKey(legacy), seed, 'an Ed25519 key is still written as bare hex')
  t.equal(parseSigningKey(seed.toUpperCase()).algorithm, 'ed25519', 'case is ignored, as before')
  for (const name of KEY_ALGORITHM_NAMES) {
    const key = generateSigningKey(name)
    const text = formatSigningKey(key)
    t.same(parseSigningKey(`  ${text}\n`), key, `${name} round-trips`)
    t.equal(createSignerFromKey(parseSigningKey(text)).publicKey, createSignerFromKey(key).publicKey)
  }
  t.match(formatSigningKey(generateSigningKey('p384')), /^p384:[0-9a-f]{96}$/)
  t.match(formatSigningKey(generateSigningKey('p256+mldsa65')), /^hybrid:[0-9a-f]{64}:[0-9a-f]{64}:p256\+mldsa65$/)
})

t.test('a malformed key file names what is wrong and never echoes the secret', async t => {
  const secret = 'ab'.repeat(32)
  const cases: [string, RegExp][] = [
    [secret.slice(2), /expected 64 hex characters \(an Ed25519 seed\)/],
    [`p384:${secret}`, /p384 secret: expected 96 hex/],
    [`rsa:${secret}`, /unknown algorithm prefix "rsa"/],
    [`ed25519:${secret}`, /bare hex, without a prefix/],
    [`hybrid:${secret}:${secret}:ed448+mldsa65`, /alg_set one of/],
    [`hybrid:${secret}:${secret.slice(4)}:ed25519+mldsa65`, /ML-DSA-65 seed is 64 hex/],
    [`zz${secret.slice(2)}`, /expected 64 hex/],
  ]
  for (const [text, message] of cases) {
    t.throws(() => parseSigningKey(text), { code: 'gate_invalid_key', message }, text.slice(0, 12))
    try {
      parseSigningKey(text)
    } catch (err) {
      t.notMatch((err as Error).message, secret.slice(4, 40))
    }
  }
  t.throws(() => generateSigningKey('rsa' as KeyAlgorithmName), { code: 'gate_invalid_key' })
})

t.test('stored key bytes: an Ed25519 seed stays 32 raw bytes, others their key file line', async t => {
  for (const name of KEY_ALGORITHM_NAMES) {
    const key = generateSigningKey(name)
    const bytes = signingKeyBytes(key)
    if (name === 'ed25519') t.equal(bytes.length, 32)
    else t.not(bytes.length, 32)
    t.same(signingKeyFromBytes(bytes), key, name)
    t.equal(publicKeyOfKeyBytes(bytes), createSignerFromKey(key).publicKey)
    t.equal(createSignerFromKeyBytes(bytes).algorithm, name.includes('+') ? 'hybrid' : name)
  }
  t.throws(() => signingKeyFromBytes(new Uint8Array(31)), { code: 'gate_invalid_key' })
  t.throws(() => signingKeyFromBytes(Uint8Array.from([0xff, 0xfe, 0x00])), { code: 'gate_invalid_key' })
  t.throws(() => signingKeyFromBytes(utf8('07'.repeat(32).padEnd(66, ' '))), { code: 'gate_invalid_key', message: /stored as its 32 bytes/ })
})
