// Every service's /metrics, as the real process answers it after some traffic, passes Prometheus's own
// linter: `promtool check metrics` exits 0 and prints nothing (issue 37: prom-client's default
// `nodejs_active_*_total` gauges failed it, a gauge must not end in `_total`). Services: `gate sidecar`
// (alone and in a fleet, which adds the fleet gauges), `gate api protect`, `gate trust serve`, and the
// control routes of `gate mcp serve` and `gate mcp serve-http`.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'
import { FLEET_TOKEN, startFleetSidecar, startTrustControl, waitUntil, fleetHealth } from '../testing/fleet.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'
import { checkMetrics, promtoolSkipReason } from '../testing/promtool.js'

const TOKEN = 'metrics-lint-control-token-' + 'x'.repeat(16)
const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const skip = promtoolSkipReason()

function request(method: string, path: string) {
  return { request_id: uuidv7(), method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) }
}

/** Scrapes `url` and requires promtool to pass it silently. */
async function lint(t: Test, url: string, token = TOKEN): Promise<void> {
  const scraped = await call(url, { headers: { authorization: `Bearer ${token}` } })
  t.equal(scraped.status, 200, `scrape ${url}`)
  t.match(scraped.text, /\nprocess_resident_memory_bytes /, 'the default process metrics are there')
  t.match(scraped.text, /\n# TYPE nodejs_active_handles gauge\n/, 'the per-type handle gauges stay (their sum is the total)')
  const { code, output } = await checkMetrics(scraped.text)
  t.equal(output, '', 'promtool prints no lint finding')
  t.equal(code, 0, 'promtool check metrics exits 0')
}

t.test('gate sidecar /metrics passes promtool', { skip }, async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('GET', '/pets') })).status, 200)
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: request('POST', '/pets') })).status, 200)
  t.equal((await call(`${gate.url}/gate/evaluate`, { body: { not: 'a request' } })).status, 400)
  await lint(t, `${gate.url}/metrics`)
})

t.test('gate api protect /gate/metrics passes promtool', { skip }, async t => {
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const dir = t.testdir()
  const spec = join(dir, 'pets.yaml')
  writeFileSync(spec, PETS_SPEC_YAML)
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'r.db')], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  t.equal((await call(`${gate.url}/pets/1`)).status, 200)
  t.equal((await call(`${gate.url}/pets`, { body: { name: 'rex' } })).status, 403)
  await lint(t, `${gate.url}/gate/metrics`)
})

t.test('gate trust serve /metrics passes promtool', { skip }, async t => {
  const { seed, db } = await gateFiles(t)
  const serve = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => serve.stop('SIGKILL'))
  t.equal((await call(`${serve.url}/v1/receipts/query?limit=5`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200)
  await lint(t, `${serve.url}/metrics`)
})

t.test('a fleet sidecar and its trust-control pass promtool (fleet gauges included)', { skip }, async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const sidecar = await startFleetSidecar(t, dir, 1, control.url)
  await waitUntil('the sidecar enrolled its key', async () => (await fleetHealth(sidecar.url)).key_enrolled)
  t.equal((await call(`${sidecar.url}/gate/evaluate`, { body: request('GET', '/pets') })).status, 200)
  const scraped = await call(`${sidecar.url}/metrics`, { headers: { authorization: `Bearer ${FLEET_TOKEN}` } })
  t.match(scraped.text, /\ngate_fleet_/, 'the fleet gauges are there')
  await lint(t, `${sidecar.url}/metrics`, FLEET_TOKEN)
  await lint(t, `${control.url}/metrics`, FLEET_TOKEN)
})

t.test('gate mcp serve and gate mcp serve-http control routes pass promtool', { skip }, async t => {
  const stdio = await gateFiles(t)
  const mcp = await startGateMcp(t, ['--receipt-store', stdio.db, '--authority-seed-file', stdio.seed, '--server-id', 'fs', '--allow-tool', 'echo', ...FIXTURE], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  await mcp.client.callTool({ name: 'echo', arguments: { text: 'hi' } })
  await lint(t, `${mcp.controlUrl}/metrics`)

  const hosted = await gateFiles(t)
  const edge = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', hosted.db, '--authority-seed-file', hosted.seed, '--server-id', 'fs', '--allow-tool', 'echo', ...FIXTURE], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  const { client } = await edge.connect()
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
  await lint(t, `${edge.controlUrl}/metrics`)
})
