import t from 'tap'
import { CHECKS, runConformance } from './index.js'
import { startBrokenSidecar } from './testing/broken-sidecar.js'

t.test('bad options are usage errors, raised before any traffic', async t => {
  await t.rejects(runConformance({ sidecarUrl: 'not a url' }), { code: 'gate_invalid_config' })
  await t.rejects(runConformance({ sidecarUrl: 'http://127.0.0.1:9/?x=1' }), { code: 'gate_invalid_config' })
  await t.rejects(runConformance({ sidecarUrl: 'http://127.0.0.1:9', only: ['health.live', 'nope'] }), { code: 'gate_invalid_config', message: /nope/ })
})

t.test('CHECKS carries no code and every check says what it enforces', async t => {
  for (const c of CHECKS) {
    t.notOk('run' in c, `${c.id} exposes no run function`)
    t.type(c.required, 'boolean')
  }
})

t.test('only runs the named checks, in CHECKS order, and reports progress', async t => {
  const sidecar = await startBrokenSidecar()
  t.teardown(() => sidecar.close())
  const seen: string[] = []
  const report = await runConformance({ sidecarUrl: `${sidecar.url}/`, only: ['receipt.id-recomputed', 'health.live'], onResult: r => seen.push(r.id) })
  t.same(report.results.map(r => r.id), ['health.live', 'receipt.id-recomputed'])
  t.same(seen, ['health.live', 'receipt.id-recomputed'])
  t.equal(report.sidecarUrl, sidecar.url, 'a trailing slash is dropped')
  t.same(report.summary, { passed: 2, failed: 0, skipped: 0, requiredFailed: 0 })
})

t.test('without an SDK under test the sdk.* checks are skipped with the note', async t => {
  const sidecar = await startBrokenSidecar()
  t.teardown(() => sidecar.close())
  const report = await runConformance({ sidecarUrl: sidecar.url, only: ['sdk.unreachable-503'], sdkNote: 'no SDK here' })
  t.same(report.results.map(r => [r.result, r.detail]), [['SKIP', 'no SDK here']])
})

t.test('a sidecar that stops answering costs three deadlines, then requests fail unsent', async t => {
  const { startSilentServer } = await import('./fakes/silent-server.js')
  const silent = await startSilentServer()
  t.teardown(() => silent.close())
  const report = await runConformance({ sidecarUrl: silent.url, requestTimeoutMs: 200, only: ['health.live', 'health.ready', 'evaluate.bad-json-400', 'verify.not-a-receipt-400'] })
  t.same(report.results.map(r => r.result), ['FAIL', 'FAIL', 'FAIL', 'FAIL'])
  t.match(report.results[0]?.detail, 'no complete answer within 200 ms')
  t.match(report.results[3]?.detail, 'not sent, the sidecar did not answer the last 3 requests in time')
})
