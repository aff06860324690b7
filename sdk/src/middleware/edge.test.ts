// The edge entry (`@gate/sdk/edge`, used by @gate/next): its whole compiled import graph is free of
// node: modules, undici and ajv, and the fetch-based core decides like the Node one.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { validate } from '@gate/schemas'
import { createEdgeGateCore } from './edge.js'
import { closedPortUrl, startFakeSidecar } from './testing/index.js'

/** Every module reachable from `entry` (ours, followed) and every bare specifier it names (not followed). */
function importGraph(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>()
  const bare = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const source = readFileSync(file, 'utf8')
    for (const m of source.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = (m[1] ?? m[2]) as string
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec))
      else if (spec.startsWith('@gate/')) visit(fileURLToPath(import.meta.resolve(spec, pathToFileURL(file).href)))
      else bare.add(spec)
    }
  }
  visit(entry)
  return { files, bare }
}

for (const [label, entry] of [
  ['@gate/sdk/edge', fileURLToPath(import.meta.resolve('@gate/sdk/edge'))],
  ['@gate/next', fileURLToPath(new URL('../../next/dist/index.js', import.meta.url))],
] as const) {
  t.test(`${label} imports no node: module, undici or ajv anywhere in its graph`, async t => {
    const { files, bare } = importGraph(entry)
    t.ok(files.size > 10, `${files.size} modules walked`)
    for (const spec of bare) {
      t.notOk(spec.startsWith('node:') || isBuiltin(spec), `no Node builtin: ${spec}`)
      t.notOk(/^(undici|ajv|ajv-formats)(\/|$)/.test(spec), `no undici or ajv: ${spec}`)
    }
    t.notOk([...files].some(f => /schemas\/v1\/dist\/(index|load|create-ajv|schema-files)\.js$/.test(f)), 'only the precompiled validators of @gate/schemas')
  })
}

t.test('the graph walk sees undici in the Node entry (control)', async t => {
  t.ok(importGraph(fileURLToPath(new URL('./index.js', import.meta.url))).bare.has('undici'))
})

t.test('the fetch-based core allows, denies and fails closed like the Node one', async t => {
  const fake = await startFakeSidecar()
  t.teardown(() => fake.close())
  const core = createEdgeGateCore({ sidecarUrl: fake.url })
  t.teardown(() => core.close())
  const base = { path: '/pets', rawQuery: '', headers: {}, body: null }
  const allowed = await core.decide({ ...base, method: 'GET' })
  t.equal(allowed.allowed, true)
  t.match(allowed.headers['x-gate-receipt-id'], /^[0-9a-f]{64}$/)
  const body = new TextEncoder().encode('{"a":1}')
  const denied = await core.decide({ ...base, method: 'POST', headers: { 'content-length': '7' }, body: new Blob([body]).stream() })
  t.equal(denied.allowed, false)
  if (!denied.allowed) {
    t.equal(denied.status, 403)
    t.same(validate('gate.http.error_body.v1', denied.body), { ok: true })
  }
  fake.mode = 'hang'
  const quick = createEdgeGateCore({ sidecarUrl: fake.url, timeoutMs: 150, sidecarPublicKey: fake.signer.publicKey })
  const timedOut = await quick.decide({ ...base, method: 'GET' })
  t.equal(!timedOut.allowed && timedOut.status, 504)
  fake.mode = 'huge-answer'
  const huge = await core.decide({ ...base, method: 'GET' })
  t.equal(!huge.allowed && huge.status, 502, 'an answer over the read cap is refused')
  fake.mode = 'impostor'
  const forged = await core.decide({ ...base, method: 'GET' })
  t.equal(!forged.allowed && forged.status, 502)
  const down = createEdgeGateCore({ sidecarUrl: await closedPortUrl(), sidecarPublicKey: fake.signer.publicKey })
  const unreachable = await down.decide({ ...base, method: 'GET' })
  t.equal(!unreachable.allowed && unreachable.status, 503)
})

t.test('a unix: sidecar is reached over its socket where node:net exists, and refused up front where it does not', async t => {
  const fake = await startFakeSidecar('honest', 'unix')
  t.teardown(() => fake.close())
  const core = createEdgeGateCore({ sidecarUrl: fake.url })
  t.teardown(() => core.close())
  t.equal((await core.decide({ method: 'GET', path: '/pets', rawQuery: '', headers: {}, body: null })).allowed, true, 'Next.js route handlers on the Node runtime')
  // the edge runtime has no node:net; a runtime without it cannot be started here, so its absence is simulated
  const proc = process as unknown as { getBuiltinModule: (id: string) => unknown }
  const real = proc.getBuiltinModule
  proc.getBuiltinModule = (id: string) => (id === 'node:net' ? undefined : real.call(process, id))
  try {
    t.throws(() => createEdgeGateCore({ sidecarUrl: fake.url }), { code: 'gate_invalid_config', message: /^sidecarUrl must be an http:\/\/ or https:\/\/ URL on this runtime/ })
  } finally {
    proc.getBuiltinModule = real
  }
})
