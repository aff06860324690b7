// The end-to-end cases every adapter must pass, run against the real `gate sidecar` process and a
// real app of the adapter's framework. The adapter's test supplies `startApp`; the app contract:
//   GET /healthz, GET /pets, GET /pets/:id, POST /pets, each behind Gate, each answering 200 with
//   { body, gate: { verdict, receiptId, failOpen, skipped }, query, capabilityHeader }
//   where `body` is the parsed JSON body (parser placed before or after Gate as asked).
// Test support only.
import { once } from 'node:events'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { validate } from '@gate/schemas'
import { widenedDelegation } from '../../protocol/capability-examples.js'
import { callerIdentityHash } from '../../protocol/content-hash.js'
import { exampleSigner } from '../../protocol/receipt-examples.js'
import { sha256Hex } from '../../protocol/sha256.js'
import { HTTP_METHODS } from '../../types.js'
import type { GateMiddlewareOptions } from '../options.js'
import { startCaptureProxy } from './capture-proxy.js'
import { startFakeSidecar } from './fake-sidecar.js'
import { call } from './http-client.js'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { hasSidecarBuild, startSidecarProcess, unreachableSidecarUrl, GATE_CLI, type SidecarProcess } from './sidecar-process.js'
import type { TestTransport } from './test-listen.js'

export type ParserPlacement = 'before' | 'after'

export interface AdapterApp {
  url: string
  close(): Promise<void>
}

/** Serves `listener` (an Express or Koa app's request handler) on a free loopback port; `close` ends its connections, then runs `onClose`. */
export async function serveOnLoopback(listener: RequestListener, onClose: () => Promise<void>): Promise<AdapterApp> {
  const server = createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections()
      server.close()
      await onClose()
    },
  }
}

export type StartApp = (options: GateMiddlewareOptions, parser: ParserPlacement) => Promise<AdapterApp>

export interface AdapterSuiteOptions {
  /** Mount point of the app's routes (`/edge` → `/edge/pets`); the sidecar's spec is prefixed to match. */
  prefix?: string
  /** False where the adapter documents that the handler still sees `gate_capability` in the URL. */
  stripsQueryToken?: boolean
  /**
   * False where the framework merges repeated header field lines before Gate sees them (Web `Headers`):
   * a repeated capability header then reaches the sidecar as one invalid token instead of a 400.
   */
  keepsFieldLines?: boolean
  /** How the app reaches the sidecars (real and fake): TCP (default) or a Unix socket (`sidecarUrl: 'unix:PATH'`). */
  transport?: TestTransport
}

/** The pets spec with every path under `prefix`. */
export function prefixedPetsSpec(prefix: string): string {
  return PETS_SPEC_YAML.replace(/^ {2}\/(pets|admin)/gm, `  ${prefix}/$1`)
}

const JSON_HEADERS = { 'content-type': 'application/json' }
// An authority the suite's sidecar trusts (--trusted-issuer), to sign delegation links.
const DELEGATING_AUTHORITY = exampleSigner('ed25519', 41)

/** Runs every case; `name` labels the framework in messages. */
export async function runAdapterSuite(t: Test, name: string, startApp: StartApp, suite: AdapterSuiteOptions = {}): Promise<void> {
  const p = suite.prefix ?? ''
  const transport = suite.transport ?? 'tcp'
  if (transport === 'unix') name = `${name} over a Unix socket`
  const app = async (t: Test, options: GateMiddlewareOptions, parser: ParserPlacement = 'after') => {
    const a = await startApp({ skip: [`${p}/healthz`], ...options }, parser)
    t.teardown(() => a.close())
    return a.url
  }

  await t.test(`${name}: against the real gate sidecar`, { skip: hasSidecarBuild() ? false : `no sidecar build at ${GATE_CLI}` }, async t => {
    const sidecar: SidecarProcess = await startSidecarProcess({ dir: t.testdir(), spec: prefixedPetsSpec(p), transport, extraArgs: ['--trusted-issuer', DELEGATING_AUTHORITY.publicKey] })
    t.teardown(() => sidecar.stop())
    // The cases that only need an app in front of this sidecar with the default options share one:
    // the apps hold no state between requests, and starting one can take seconds (`next start`).
    let plain: Promise<string> | undefined
    const plainApp = () => (plain ??= app(t, { sidecarUrl: sidecar.url }))

    await t.test('GET is allowed with X-Gate-Receipt-Id and a receipt the sidecar verifies', async t => {
      const url = await plainApp()
      const res = await call(url, 'GET', `${p}/pets?limit=2`)
      t.equal(res.status, 200)
      t.match(res.headers['x-gate-receipt-id'], /^[0-9a-f]{64}$/)
      t.match(res.json.gate, { verdict: 'allow', receiptId: res.headers['x-gate-receipt-id'], failOpen: null })
      t.same(res.json.query, { limit: '2' })
    })

    await t.test('POST without a capability answers 403 with the structured body', async t => {
      const url = await plainApp()
      const res = await call(url, 'POST', `${p}/pets`, { headers: JSON_HEADERS, body: '{"name":"Rex"}' })
      t.equal(res.status, 403, sidecar.output())
      t.same(validate('gate.http.error_body.v1', res.json), { ok: true })
      t.equal(res.json.error, 'gate_access_denied')
      t.equal(res.json.receipt_id, res.headers['x-gate-receipt-id'])
    })

    for (const parser of ['after', 'before'] as const) {
      await t.test(`POST with an issued capability reaches the handler with its body intact (parser ${parser} Gate)`, async t => {
        const url = parser === 'after' ? await plainApp() : await app(t, { sidecarUrl: sidecar.url }, parser)
        const { token } = await sidecar.issue([`POST ${p}/pets`])
        const body = '{"name":"Rex","tags":["a","ü"]}'
        const res = await call(url, 'POST', `${p}/pets`, { headers: { ...JSON_HEADERS, 'x-gate-capability': token }, body })
        t.equal(res.status, 200, res.text)
        t.same(res.json.body, JSON.parse(body))
        t.equal(res.json.gate.verdict, 'allow')
        t.equal(res.json.capabilityHeader, null, 'the handler does not see the token')

        const viaQuery = await call(url, 'POST', `${p}/pets?x=1&gate_capability=${encodeURIComponent(token)}`, { headers: JSON_HEADERS, body })
        t.equal(viaQuery.status, 200, viaQuery.text)
        if (suite.stripsQueryToken !== false) t.same(viaQuery.json.query, { x: '1' }, 'gate_capability is removed from the query the handler sees')
      })
    }

    await t.test('issue 23: a delegated child wider than its link answers 403; its receipt names the reason', async t => {
      const capture = await startCaptureProxy(sidecar.url)
      t.teardown(() => capture.close())
      const url = await app(t, { sidecarUrl: capture.url })
      const child = widenedDelegation({ authority: DELEGATING_AUTHORITY, delegatee: exampleSigner('ed25519', 42), subject: exampleSigner('ed25519', 43).publicKey, now: Math.floor(Date.now() / 1000), delegatedTool: `GET ${p}/pets` })
      const res = await call(url, 'POST', `${p}/pets`, { headers: { ...JSON_HEADERS, 'x-gate-capability': Buffer.from(JSON.stringify(child)).toString('base64url') }, body: '{"name":"Rex"}' })
      t.equal(res.status, 403, res.text)
      t.equal(res.json.error, 'gate_access_denied')
      t.match(res.json.message, /does not state what it delegates/)
      t.match(capture.lastReceipt().verdict, { verdict: 'deny', guard: 'CapabilityGuard', details: { reason_code: 'capability_attenuation_unproven' } })
    })

    await t.test('a revoked capability answers 403', async t => {
      const url = await plainApp()
      const { token, id } = await sidecar.issue([`POST ${p}/pets`])
      t.equal((await call(url, 'POST', `${p}/pets`, { headers: { ...JSON_HEADERS, 'x-gate-capability': token }, body: '{}' })).status, 200)
      await sidecar.revoke(id)
      const res = await call(url, 'POST', `${p}/pets`, { headers: { ...JSON_HEADERS, 'x-gate-capability': token }, body: '{}' })
      t.equal(res.status, 403)
      t.equal(res.json.error, 'gate_access_denied')
      t.match(res.json.message, /revoked/)
    })

    await t.test('an oversized body answers 413 before the sidecar is asked', async t => {
      const capture = await startCaptureProxy(sidecar.url, transport)
      t.teardown(() => capture.close())
      const url = await app(t, { sidecarUrl: capture.url, maxBodyBytes: 64 })
      const res = await call(url, 'POST', `${p}/pets`, { headers: JSON_HEADERS, body: JSON.stringify({ name: 'x'.repeat(100) }) })
      t.equal(res.status, 413)
      t.equal(res.json.error, 'gate_payload_too_large')
      t.equal(capture.calls.filter(c => c.path === '/gate/evaluate').length, 0)
    })

    await t.test('a Gate header on two field lines answers 400 before the sidecar is asked', async t => {
      const capture = await startCaptureProxy(sidecar.url, transport)
      t.teardown(() => capture.close())
      const url = await app(t, { sidecarUrl: capture.url })
      const cases = [
        ['x-gate-execution-nonce', '0'.repeat(32)],
        ['x-gate-approval-id', 'a1'],
      ]
      if (suite.keepsFieldLines !== false) cases.push(['x-gate-capability', '{}'])
      for (const [name, value] of cases as [string, string][]) {
        const res = await call(url, 'GET', `${p}/pets`, { headers: [name, value, name, value] })
        t.equal(res.status, 400, `${name} twice`)
        t.equal(res.json?.error, 'gate_bad_request', res.text)
      }
      t.equal(capture.calls.filter(c => c.path === '/gate/evaluate').length, 0)
    })

    await t.test('raw Authorization, Cookie and x-api-key never reach the sidecar; the receipt binds the hash', async t => {
      const capture = await startCaptureProxy(sidecar.url, transport)
      t.teardown(() => capture.close())
      const url = await app(t, { sidecarUrl: capture.url, identityCookie: 'sid' })
      const secrets = ['Bearer-SECRET-7f3a', 'cookie-SECRET-91bc', 'apikey-SECRET-42de']
      const res = await call(url, 'GET', `${p}/pets`, { headers: { authorization: `Bearer ${secrets[0]}`, cookie: `sid=${secrets[1]}`, 'x-api-key': secrets[2]! } })
      t.equal(res.status, 200)
      for (const text of capture.rawTexts) for (const s of secrets) t.notOk(text.includes(s), 'no raw credential in what the sidecar received')
      const evaluation = capture.calls.find(c => c.path === '/gate/evaluate')!
      t.same(validate('gate.http.request.v1', evaluation.body), { ok: true })
      const hash = sha256Hex(secrets[0]!)
      const caller = { subject: `bearer:${hash.slice(0, 16)}`, auth_method: { method: 'bearer' as const, token_hash: hash } }
      const receipt = capture.lastReceipt()
      t.equal(receipt.caller_identity_hash, callerIdentityHash(caller))
      const verified = await sidecar.verify(receipt)
      t.equal(verified.ok, true, 'the stored receipt verifies at the sidecar')
      t.notOk(JSON.stringify(receipt).includes('SECRET'))
    })

    await t.test('a forged receipt from an impostor sidecar answers 502', async t => {
      const live = await call(sidecar.url, 'GET', '/gate/live')
      const impostor = await startFakeSidecar('honest', transport)
      t.teardown(() => impostor.close())
      const url = await app(t, { sidecarUrl: impostor.url, sidecarPublicKey: live.json.kernel_key })
      const res = await call(url, 'GET', `${p}/pets`)
      t.equal(res.status, 502)
      t.equal(res.json.error, 'gate_invalid_receipt')
    })

    await t.test('skipped paths bypass Gate', async t => {
      const url = await plainApp()
      const res = await call(url, 'GET', `${p}/healthz`)
      t.equal(res.status, 200)
      t.equal(res.json.gate.skipped, true)
      t.notOk('x-gate-receipt-id' in res.headers)
    })

    await t.test('generated hostile requests: never a 5xx, and what passes was allowed with a receipt', async t => {
      // fast-check is loaded here, not at the top: this module is exported as test support, and its
      // other users (fixtures, the pets spec) need nothing of it
      const { default: fc } = await import('fast-check')
      const url = await plainApp()
      const segment = fc.oneof(
        fc.constantFrom('pets', '7', 'healthz', '.', '..', '%2e%2e', '', '%2F', '%00', '%ED%A0%80', '%ZZ', '%', "a'b", 'a;b=c', '@', ':'),
        fc.stringMatching(/^[a-z0-9\-._~!$&'()*+,;=:@]{1,8}$/),
      )
      const path = fc.oneof(
        { arbitrary: fc.constantFrom(`${p}/pets`, `${p}/pets/7`), weight: 1 },
        { arbitrary: fc.array(segment, { maxLength: 3 }).map(segments => `${p}/${segments.join('/')}`), weight: 2 },
      )
      const query = fc.option(fc.uniqueArray(fc.constantFrom('limit=2', 'a=1', 'gate_capability=x', '=', 'x%ZZ=1', 'q=%ED%A0%80', 'a', 'a=2'), { maxLength: 3 }).map(parts => `?${parts.join('&')}`), { nil: '' })
      const value = fc.string({ unit: 'grapheme-ascii', maxLength: 24 }).map(v => v.trim())
      const headers = fc.dictionary(fc.constantFrom('authorization', 'x-api-key', 'cookie', 'x-gate-capability', 'x-gate-approval-id', 'x-gate-execution-nonce', 'content-type', 'x-request-id'), value, { maxKeys: 4 })
      const body = fc.oneof(fc.constant(undefined), fc.constantFrom('{"name":"Rex"}', '{', '[]', 'null', '{"__proto__":{"x":1}}'), fc.string({ maxLength: 40 }))
      const seen: Record<number, number> = {}
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...HTTP_METHODS), path, query, headers, body, async (method, target, q, h, b) => {
          const res = await call(url, method, target + q, { headers: h, body: method === 'GET' || method === 'HEAD' ? undefined : b })
          seen[res.status] = (seen[res.status] ?? 0) + 1
          const what = `${method} ${target}${q} ${JSON.stringify(h)}: ${res.status} ${res.text.slice(0, 200)}`
          if (res.status >= 500) throw new Error(`${what} (the sidecar is up: nothing here should be a 5xx)`)
          const receiptId = res.headers['x-gate-receipt-id']
          if (res.status === 200 && res.json?.gate !== undefined && res.json.gate.skipped !== true) {
            if (res.json.gate.verdict !== 'allow' || receiptId === undefined || res.json.gate.receiptId !== receiptId) throw new Error(`${what}: reached the handler without an allow and its receipt`)
          }
          if (typeof res.json?.error === 'string' && res.json.error.startsWith('gate_')) {
            if (!validate('gate.http.error_body.v1', res.json).ok) throw new Error(`${what}: not the spec error body`)
            if (res.status === 403 && res.json.receipt_id !== receiptId) throw new Error(`${what}: the denial names another receipt than its header`)
          }
          return true
        }),
        { numRuns: 60, seed: 7766, includeErrorInReport: true },
      )
      t.pass(`60 generated requests answered: ${JSON.stringify(seen)} by status`)
    })

    await t.test('the receipt records the sidecar\'s own route pattern', async t => {
      const capture = await startCaptureProxy(sidecar.url, transport)
      t.teardown(() => capture.close())
      const url = await app(t, { sidecarUrl: capture.url })
      const res = await call(url, 'GET', `${p}/pets/7`)
      t.equal(res.status, 200)
      t.equal(capture.lastReceipt().route_pattern, `${p}/pets/{id}`)
    })
  })

  await t.test(`${name}: sidecar faults`, async t => {
    await t.test('sidecar down answers 503; fail-open passes and says so', async t => {
      const down = await unreachableSidecarUrl(transport)
      const closed = await call(await app(t, { sidecarUrl: down, sidecarPublicKey: 'a'.repeat(64) }), 'GET', `${p}/pets`)
      t.equal(closed.status, 503)
      t.equal(closed.json.error, 'gate_sidecar_unreachable')
      t.same(validate('gate.http.error_body.v1', closed.json), { ok: true })
      const open = await call(await app(t, { sidecarUrl: down, onSidecarError: 'allow' }), 'POST', `${p}/pets`, { headers: JSON_HEADERS, body: '{"a":1}' })
      t.equal(open.status, 200)
      t.equal(open.headers['x-gate-fail-open'], 'gate_sidecar_unreachable')
      t.same(open.json.body, { a: 1 })
      t.equal(open.json.gate.failOpen, 'gate_sidecar_unreachable')
    })

    await t.test('a sidecar slower than the timeout answers 504', async t => {
      const fake = await startFakeSidecar('hang', transport)
      t.teardown(() => fake.close())
      const res = await call(await app(t, { sidecarUrl: fake.url, timeoutMs: 200, sidecarPublicKey: fake.signer.publicKey }), 'GET', `${p}/pets`)
      t.equal(res.status, 504)
      t.equal(res.json.error, 'gate_timeout')
    })

    await t.test('a sidecar answering 500 or garbage answers 502 gate_evaluation_failed', async t => {
      const fake = await startFakeSidecar('status-500', transport)
      t.teardown(() => fake.close())
      const res = await call(await app(t, { sidecarUrl: fake.url, sidecarPublicKey: fake.signer.publicKey }), 'GET', `${p}/pets`)
      t.equal(res.status, 502)
      t.equal(res.json.error, 'gate_evaluation_failed')
    })
  })
}


/** The `gate` member of the app contract's answer, from a handler's GateContext. */
export function summarizeGate(gate: { verdict: { verdict: string } | null; receipt: { id: string } | null; failOpen: string | null } | null | undefined) {
  return {
    verdict: gate?.verdict?.verdict ?? null,
    receiptId: gate?.receipt?.id ?? null,
    failOpen: gate?.failOpen ?? null,
    skipped: gate === null,
  }
}
