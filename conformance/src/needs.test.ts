// What the report says the sidecar under test needs, against the suite's own fake sidecar: started with
// another document, without a control token, or with another token than the one given.
import t from 'tap'
import { runConformance } from './run-conformance.js'
import { startBrokenSidecar } from './testing/broken-sidecar.js'

const TOKEN = 'needs-test-control-token'
const EMPTY_DOCUMENT = JSON.stringify({ openapi: '3.1.0', info: { title: 'none', version: '1' }, paths: {} })

t.test('another document and no token: the document checks point to the need, which names both hashes and the way out', async t => {
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN, specText: EMPTY_DOCUMENT })
  t.teardown(() => sidecar.close())
  const report = await runConformance({
    sidecarUrl: sidecar.url,
    only: ['evaluate.allow-safe-get', 'receipt.policy-hash', 'evaluate.bad-json-400', 'capabilities.valid-token-allows', 'nonces.retry-allowed'],
  })
  const result = (id: string) => report.results.find(r => r.id === id)!
  t.match(result('evaluate.allow-safe-get'), { result: 'FAIL', detail: /see "the sidecar under test needs" below\)$/ })
  t.match(result('receipt.policy-hash'), { result: 'FAIL', detail: /see "the sidecar under test needs" below/ })
  t.match(result('evaluate.bad-json-400'), { result: 'PASS', detail: null })
  t.match(result('capabilities.valid-token-allows'), { result: 'SKIP' })
  t.equal(report.needs.length, 2)
  t.match(report.needs[0], /^the OpenAPI document the checks expect: its receipts carry policy_hash [0-9a-f]{64}, not the SHA-256 of \(built-in pets document\)/)
  t.match(report.needs[0], 'gate-conformance --print-default-spec > pets.json, then gate sidecar --spec pets.json')
  t.match(report.needs[0], 'gate-conformance --start-sidecar')
  t.match(report.needs[1], 'its control token, for the 1 skipped checks that issue and revoke capability tokens: pass it with --control-token T or GATE_CONTROL_TOKEN')
  t.match(result('nonces.retry-allowed'), { result: 'SKIP', detail: /needs --strict-nonces/ }, 'skipped for the nonce mode: not counted')
})

t.test('a token the sidecar refuses: the need says its control routes answered 401', async t => {
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN })
  t.teardown(() => sidecar.close())
  const report = await runConformance({ sidecarUrl: sidecar.url, controlToken: 'another-token-of-enough-length', only: ['capabilities.valid-token-allows'] })
  t.match(report.results[0], { result: 'FAIL', detail: /see "the sidecar under test needs" below/ })
  t.same(report.needs, ['the control token it was started with: its control routes answered 401 to the one given (--control-token or GATE_CONTROL_TOKEN)'])
})

t.test('the document and the token it needs: nothing to say', async t => {
  const sidecar = await startBrokenSidecar({ controlToken: TOKEN })
  t.teardown(() => sidecar.close())
  const report = await runConformance({ sidecarUrl: sidecar.url, controlToken: TOKEN, only: ['evaluate.allow-safe-get', 'receipt.policy-hash', 'capabilities.valid-token-allows'] })
  t.same(report.results.map(r => r.result), ['PASS', 'PASS', 'PASS'])
  t.same(report.needs, [])
})
