// End-to-end: the real `gate sidecar`, `gate api protect` and `gate trust serve` processes take known
// traffic, then /metrics is scraped and its counters asserted (docs/observability.md).
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { metricValue, parseMetrics, type MetricSample } from '../testing/metrics-text.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

const TOKEN = 'metrics-control-token-' + 'x'.repeat(16)
const auth = { authorization: `Bearer ${TOKEN}` }

function request(method: string, path: string) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) }
}

async function scrape(url: string, headers: Record<string, string> = auth): Promise<MetricSample[]> {
  const r = await call(url, { headers })
  if (r.status !== 200) throw new Error(`scrape ${url}: ${r.status} ${r.text}`)
  t.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  return parseMetrics(r.text)
}

async function sidecar(t: Test, extra: string[] = [], env: Record<string, string> = {}): Promise<GateProcess> {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...extra], { env: { GATE_CONTROL_TOKEN: TOKEN, ...env } })
  t.teardown(() => gate.stop('SIGKILL'))
  return gate
}

t.test('sidecar /metrics counts decisions by verdict, route pattern and reason code', async t => {
  const gate = await sidecar(t)
  for (let i = 0; i < 3; i++) t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('GET', `/pets/${1000 + i}`) })).status, 200)
  for (let i = 0; i < 2; i++) t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets') })).status, 200)
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('GET', '/not/in/the/spec-7731') })).status, 200)
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: { not: 'a request' } })).status, 400)

  const samples = await scrape(`${gate.url}/metrics`)
  t.equal(metricValue(samples, 'gate_decisions_total', { verdict: 'allow', route: '/pets/{id}', method: 'GET', reason: 'allowed' }), 3)
  t.equal(metricValue(samples, 'gate_decisions_total', { verdict: 'deny', route: '/pets', method: 'POST', reason: 'capability_required' }), 2)
  t.equal(metricValue(samples, 'gate_decisions_total', { route: 'unmatched' }), 1, 'a path outside the spec is counted as unmatched')
  t.equal(metricValue(samples, 'gate_decisions_total'), 6)
  t.notOk(
    samples.some(s => Object.values(s.labels).some(v => /1000|1001|1002|spec-7731/.test(v))),
    'no label carries a raw path',
  )
  t.equal(metricValue(samples, 'gate_evaluation_duration_seconds_count', { verdict: 'allow' }), 4)
  t.equal(metricValue(samples, 'gate_evaluation_duration_seconds_count', { verdict: 'deny' }), 2)
  t.equal(metricValue(samples, 'gate_receipt_commit_duration_seconds_count'), 6, 'one receipt write per decision')
  t.ok(metricValue(samples, 'gate_receipt_commit_batch_size_count') >= 1, 'committed batches observed')
  t.equal(metricValue(samples, 'gate_receipt_commit_batch_size_sum'), 6, 'the batches hold the six receipts')
  t.equal(metricValue(samples, 'gate_http_request_duration_seconds_count', { route: '/gate/evaluate', method: 'POST', status: '200' }), 6)
  t.equal(metricValue(samples, 'gate_http_request_duration_seconds_count', { route: '/gate/evaluate', method: 'POST', status: '400' }), 1)
  t.equal(metricValue(samples, 'gate_store_healthy', { store: 'receipts' }), 1)
  t.equal(metricValue(samples, 'gate_store_errors_total'), 0)
  t.equal(metricValue(samples, 'gate_http_requests_in_flight'), 1, 'the scrape itself')
  t.ok(metricValue(samples, 'gate_open_connections') >= 1)
  t.ok(metricValue(samples, 'process_resident_memory_bytes') > 0, 'process metrics')
  t.equal(metricValue(samples, 'gate_build_info', { service: 'gate sidecar' }), 1)
  t.equal(metricValue(samples, 'gate_transparency_tree_size') + metricValue(samples, 'gate_transparency_pending_leaves'), 6, 'the tree and its backlog cover the six receipts')
  t.ok(metricValue(samples, 'gate_transparency_uncheckpointed_receipts') <= 6)
  t.equal(metricValue(samples, 'gate_transparency_healthy'), 1)

  const again = await scrape(`${gate.url}/gate/metrics`)
  t.equal(metricValue(again, 'gate_decisions_total'), 6, '/gate/metrics serves the same registry')
})

t.test('sidecar /metrics needs the control token when one is configured', async t => {
  const gate = await sidecar(t)
  const anonymous = await call(`${gate.url}/metrics`)
  t.equal(anonymous.status, 401)
  t.match(anonymous.body, { error: 'gate_unauthorized' })
  t.equal((await call(`${gate.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401)
  t.equal((await call(`${gate.url}/metrics`, { headers: auth })).status, 200)
})

t.test('GATE_METRICS_TOKEN reads /metrics and nothing else', async t => {
  const scrape = 'scrape-only-token-' + 's'.repeat(16)
  const gate = await sidecar(t, [], { GATE_METRICS_TOKEN: scrape })
  const asScraper = { authorization: `Bearer ${scrape}` }
  t.equal((await call(`${gate.url}/metrics`, { headers: asScraper })).status, 200)
  t.equal((await call(`${gate.url}/gate/metrics`, { headers: asScraper })).status, 200)
  t.equal((await call(`${gate.url}/metrics`, { headers: auth })).status, 200, 'the control token still reads it')
  t.equal((await call(`${gate.url}/approvals`, { headers: asScraper })).status, 401, 'not a control token')
  t.equal((await call(`${gate.url}/v1/receipts/query`, { headers: asScraper })).status, 401)
  t.match(gate.output(), /metrics: GET \/metrics and \/gate\/metrics \(the control token or GATE_METRICS_TOKEN\)/)
  t.notMatch(gate.output(), scrape, 'the token is never printed')
})

t.test('a malformed GATE_METRICS_TOKEN stops the start', async t => {
  const { runGate } = await import('../testing/spawn-gate.js')
  const r = await runGate(['sidecar', '--allow-ephemeral-receipts', '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN, GATE_METRICS_TOKEN: 'short' } })
  t.not(r.code, 0)
  t.match(r.stderr, /GATE_METRICS_TOKEN/)
  t.notMatch(r.stderr + r.stdout, /\bshort\b/, 'without echoing it')
})

t.test('--no-metrics serves no /metrics and keeps evaluating', async t => {
  const gate = await sidecar(t, ['--no-metrics'])
  t.equal((await call(`${gate.url}/metrics`, { headers: auth })).status, 404)
  t.equal((await call(`${gate.url}/gate/metrics`, { headers: auth })).status, 404)
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('GET', '/pets') })).status, 200)
  t.match(gate.output(), /metrics: off \(--no-metrics\)/)
})

t.test('api protect: /gate/metrics counts proxied requests; the upstream keeps its own /metrics', async t => {
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  const { PETS_SPEC_YAML } = await import('../testing/pets-spec.js')
  writeFileSync(spec, PETS_SPEC_YAML)
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'r.db')], {
    env: { GATE_CONTROL_TOKEN: TOKEN },
  })
  t.teardown(() => gate.stop('SIGKILL'))
  for (let i = 0; i < 2; i++) t.equal((await call(`${gate.url}/pets/${i + 50}`)).status, 200)
  t.equal((await call(`${gate.url}/pets`, { body: { name: 'rex' } })).status, 403)

  const forwarded = upstream.nextRequest('/metrics')
  await call(`${gate.url}/metrics`)
  t.equal((await forwarded).url, '/metrics', 'GET /metrics reaches the upstream')

  const samples = await scrape(`${gate.url}/gate/metrics`)
  t.equal(metricValue(samples, 'gate_decisions_total', { verdict: 'allow', route: '/pets/{id}', method: 'GET' }), 2)
  t.equal(metricValue(samples, 'gate_decisions_total', { verdict: 'deny', route: '/pets', method: 'POST', reason: 'capability_required' }), 1)
  t.equal(metricValue(samples, 'gate_proxy_duration_seconds_count', { route: '/pets/{id}', status_class: '2xx' }), 2)
  t.equal(metricValue(samples, 'gate_proxy_duration_seconds_count', { route: '/pets', status_class: '4xx' }), 1)
  // each proxied request writes a decision and a finalized receipt
  t.equal(metricValue(samples, 'gate_receipt_commit_duration_seconds_count'), 2 * metricValue(samples, 'gate_decisions_total'))
  t.equal(metricValue(samples, 'gate_build_info', { service: 'gate api protect' }), 1)
})

t.test('trust serve /metrics: service token only; requests counted by route template', async t => {
  const { dir, spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  await call(`${gate.url}/gate/evaluate`, { body: request('GET', '/pets') })
  await gate.stop()
  const tenantFile = join(dir, 'tenant-token')
  writeFileSync(tenantFile, 'tenant-read-token-' + 'y'.repeat(16), { mode: 0o600 })
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed, '--tenant-token', `acme=${tenantFile}`], {
    env: { GATE_CONTROL_TOKEN: TOKEN },
  })
  t.teardown(() => serve.stop('SIGKILL'))
  t.equal((await call(`${serve.url}/metrics`)).status, 401)
  const tenant = await call(`${serve.url}/metrics`, { headers: { authorization: `Bearer tenant-read-token-${'y'.repeat(16)}` } })
  t.equal(tenant.status, 403, 'a tenant token reads no process-wide metrics')
  t.equal((await call(`${serve.url}/metrics`, { method: 'POST', headers: auth })).status, 405)
  for (let i = 0; i < 2; i++) t.equal((await call(`${serve.url}/v1/receipts/query?limit=5`, { headers: auth })).status, 200)
  t.equal((await call(`${serve.url}/v1/receipts/${'f'.repeat(64)}`, { headers: auth })).status, 404)

  const samples = await scrape(`${serve.url}/metrics`)
  t.equal(metricValue(samples, 'gate_http_request_duration_seconds_count', { route: '/v1/receipts/query', method: 'GET', status: '200' }), 2)
  t.equal(metricValue(samples, 'gate_http_request_duration_seconds_count', { route: '/v1/receipts/:receipt_id', status: '404' }), 1, 'the template, not the id')
  t.equal(metricValue(samples, 'gate_store_healthy', { store: 'receipts' }), 1)
  t.equal(metricValue(samples, 'gate_build_info', { service: 'gate trust serve' }), 1)
})
