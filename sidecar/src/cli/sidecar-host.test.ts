// End to end: the Host and Origin check of `gate sidecar` and `gate api protect` (DNS rebinding: a page
// whose name now resolves to 127.0.0.1 reaches a loopback sidecar as same-origin, and its evaluate,
// verify and approval routes need no credential). On a loopback listener Gate's own routes answer only
// loopback names (no port or the listener's own) and --allowed-host names, and a browser Origin only
// when it is a loopback one: 403 gate_forbidden otherwise, with nothing decided or stored. What
// `gate api protect` forwards keeps the client's Host: that is the upstream's business.
import t from 'tap'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { call } from '../testing/http-client.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

/** A request to the listener with `host` as its Host header, as a rebound browser sends it (undici lets a test set it). */
function send(url: string, host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  return call(url + path, { method, headers: { host, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, rawBody: body }).then(r => ({ status: r.status, body: r.text }))
}

const evaluation = () => JSON.stringify({ request_id: uuidv7(), method: 'GET', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) })
const portOf = (url: string) => Number(new URL(url).port)

t.test('a loopback sidecar answers loopback Host names and --allowed-host names only', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--allowed-host', 'tunnel.test'])
  t.teardown(() => gate.stop('SIGKILL'))
  const port = portOf(gate.url)
  for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${port + 1}`, 'localhost.evil.example', '127.0.0.1.evil.example']) {
    for (const [method, path, body] of [['POST', '/gate/evaluate', evaluation()], ['GET', '/gate/health', undefined], ['GET', '/approvals', undefined], ['GET', '/nowhere', undefined]] as const) {
      const r = await send(gate.url, host, method, path, {}, body)
      t.equal(r.status, 403, `Host ${host}, ${method} ${path}: 403`)
      t.match(JSON.parse(r.body), { error: 'gate_forbidden', message: /Host .* is not allowed/ }, `Host ${host}, ${method} ${path}: gate_forbidden`)
    }
  }
  const refusedOrigin = await send(gate.url, `127.0.0.1:${port}`, 'POST', '/gate/evaluate', { origin: 'http://evil.example' }, evaluation())
  t.equal(refusedOrigin.status, 403, 'a foreign Origin on a loopback Host')
  t.match(JSON.parse(refusedOrigin.body), { error: 'gate_forbidden', message: /Origin http:\/\/evil\.example is not allowed/ })
  for (const host of ['localhost', `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'tunnel.test:8443']) {
    const r = await send(gate.url, host, 'POST', '/gate/evaluate', {}, evaluation())
    t.equal(r.status, 200, `Host ${host}: decided`)
    t.match(JSON.parse(r.body), { verdict: { verdict: 'allow' } })
  }
  t.equal((await send(gate.url, `localhost:${port}`, 'POST', '/gate/evaluate', { origin: `http://localhost:${port + 1}` }, evaluation())).status, 200, 'a loopback Origin')
})

t.test('--allowed-host takes a name without port or scheme', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const run = await runGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--allowed-host', 'http://tunnel.test:80'])
  t.equal(run.code, 2, 'a usage error')
  t.match(run.stderr, /--allowed-host must be a host name or IP address without a port or scheme/)
})

t.test('gate api protect: its own routes check Host, what it forwards keeps the client\'s', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: 'host-test-control-token-0123456789' } })
  t.teardown(() => gate.stop('SIGKILL'))
  const own = await send(gate.url, 'evil.example', 'GET', '/gate/health')
  t.equal(own.status, 403, 'a Gate route under a foreign Host')
  t.match(JSON.parse(own.body), { error: 'gate_forbidden' })
  const arrived = upstream.nextRequest('/pets')
  const forwarded = await send(gate.url, 'api.example.test', 'GET', '/pets')
  t.equal(forwarded.status, 200, 'the proxied API answers under its own public name')
  t.equal((await arrived).headers['x-forwarded-host'], 'api.example.test', 'the client\'s Host reaches the upstream as X-Forwarded-Host')
})
