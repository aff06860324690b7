// End to end: the real `gate sidecar` signing with a key file of every algorithm `gate keygen
// --algorithm` writes. Each receipt verifies with the SDK (verifyHttpReceipt, and the middleware core's
// local check of what the sidecar answers), the sidecar's POST /gate/verify and `gate receipt verify
// --trusted-key`; a flipped byte in the signature, in either half of a hybrid one, fails verifyHttpReceipt,
// /gate/verify and `gate receipt verify`.
// /gate/live advertises hybrid signatures (spec 03 gate.capabilities.v1).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { agreeWithPeer, ANONYMOUS_CALLER, createGateCore, uuidv7, verifyHttpReceipt, type HttpReceipt } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { call, schemaErrors } from '../testing/http-client.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'

const ALGORITHMS = ['ed25519', 'p256', 'p384', 'ed25519+mldsa65', 'p256+mldsa65', 'p384+mldsa65'] as const
const KEY_FORM: Record<(typeof ALGORITHMS)[number], RegExp> = {
  ed25519: /^[0-9a-f]{64}$/,
  p256: /^p256:04[0-9a-f]{128}$/,
  p384: /^p384:04[0-9a-f]{192}$/,
  'ed25519+mldsa65': /^hybrid:[0-9a-f]{64}:[0-9a-f]{3904}:ed25519\+mldsa65$/,
  'p256+mldsa65': /^hybrid:04[0-9a-f]{128}:[0-9a-f]{3904}:p256\+mldsa65$/,
  'p384+mldsa65': /^hybrid:04[0-9a-f]{192}:[0-9a-f]{3904}:p384\+mldsa65$/,
}

// the signature with one byte flipped in its classical part (the only part, or a hybrid's first half) or
// in a hybrid's ML-DSA-65 half
function flipped(signature: string, half: 'classical' | 'mldsa'): string {
  const flip = (hex: string) => hex.slice(0, -10) + (hex.at(-10) === '0' ? '1' : '0') + hex.slice(-9)
  if (!signature.startsWith('hybrid:')) return flip(signature)
  const [, classical, mldsa, algSet] = signature.split(':') as [string, string, string, string]
  return half === 'classical' ? `hybrid:${flip(classical)}:${mldsa}:${algSet}` : `hybrid:${classical}:${flip(mldsa)}:${algSet}`
}

for (const algorithm of ALGORITHMS) {
  t.test(`${algorithm}: the sidecar signs with the key file's algorithm; every verifier agrees, a flipped byte fails`, async t => {
    const { dir, spec, db } = await gateFiles(t)
    const keyFile = join(dir, `${algorithm}.key`)
    const keygen = await runGate(['keygen', '--algorithm', algorithm, keyFile])
    t.equal(keygen.code, 0, keygen.stderr)
    const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', keyFile])
    t.teardown(() => gate.stop('SIGKILL'))
    const live = (await call(`${gate.url}/gate/live`)).body as { kernel_key: string }
    t.same(schemaErrors('gate.http.health.v1', live), [])
    const kernelKey = live.kernel_key
    t.match(kernelKey, KEY_FORM[algorithm], 'kernel_key in its prefixed form')
    // a peer reading the envelope agrees on hybrid signatures with this service
    t.ok(agreeWithPeer((live as { capabilities?: unknown }).capabilities, 'the sidecar', ['accepts_hybrid_signatures']).has('accepts_hybrid_signatures'))
    const evaluated = await call(`${gate.url}/gate/evaluate`, {
      body: { request_id: uuidv7(), method: 'GET', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) },
    })
    t.equal(evaluated.status, 200)
    const receipt = (evaluated.body as { receipt: HttpReceipt }).receipt
    t.equal(receipt.kernel_key, kernelKey)

    const check = async (r: HttpReceipt) => {
      const file = join(dir, `${uuidv7()}.json`)
      writeFileSync(file, JSON.stringify(r))
      const cli = await runGate(['receipt', 'verify', file, '--trusted-key', kernelKey])
      const remote = (await call(`${gate.url}/gate/verify`, { body: r })).body as { ok: boolean; signer_trusted: boolean }
      return { local: verifyHttpReceipt(r, { trustedKeys: [kernelKey] }).ok, remote: remote.ok && remote.signer_trusted, cli: cli.code, cliOut: cli.stdout }
    }
    t.match(await check(receipt), { local: true, remote: true, cli: 0, cliOut: /^ok / }, 'verifies everywhere')
    // the SDK's middleware core: it pins the key /gate/live names and checks each receipt locally
    const core = createGateCore({ sidecarUrl: gate.url })
    t.teardown(() => core.close())
    const outcome = await core.decide({ method: 'GET', path: '/pets', rawQuery: '', headers: {}, body: null })
    t.match(outcome, { allowed: true, gate: { receipt: { kernel_key: kernelKey } } }, 'the middleware verified the receipt and let the request through')
    const halves = algorithm.includes('+') ? (['classical', 'mldsa'] as const) : (['classical'] as const)
    for (const half of halves) {
      t.match(await check({ ...receipt, signature: flipped(receipt.signature, half) }), { local: false, remote: false, cli: 1, cliOut: /^FAIL .* signature/ }, `a flipped byte in the ${half} part fails everywhere`)
    }
  })
}
