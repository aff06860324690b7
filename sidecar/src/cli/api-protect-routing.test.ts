// Route matching that cannot be sidestepped (issue 24, item 2) and the request as the upstream gets it
// (item 10), through the real `gate api protect` in front of a real upstream. The attacks: HEAD and
// letter case on a deny-by-default GET route fell through to the method rule and were forwarded;
// `;` parameters and an encoded slash reach the same route on upstreams that normalize; method-override
// headers and `_method` let a POST run as DELETE; a client's X-Forwarded-For reached the upstream as is.
import t, { type Test } from 'tap'
import { request } from 'undici'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

const TOKEN = 'routing-test-control-token-0123456789'

async function start(t: Test, extra: string[] = []) {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0', ...extra], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const res = await request(gate.url + path, { method: method as 'GET', headers, body })
    const text = await res.body.text()
    return { status: res.statusCode, text, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
  }
  return { gate, upstream, send }
}

// GET /admin/export has x-gate-side-effects: true (pets spec): deny-by-default on a safe method
const PROTECTED_VARIANTS: [string, string][] = [
  ['HEAD', '/admin/export'],
  ['GET', '/ADMIN/EXPORT'],
  ['GET', '/Admin/Export/'],
  ['HEAD', '/admin/EXPORT'],
  ['GET', '/admin;x=1/export'],
  ['GET', '/admin/export;jsessionid=abc'],
  ['GET', '/admin%2Fexport'],
]

t.test('HEAD, letter case, ; parameters and an encoded slash cannot reach a deny-by-default GET route', async t => {
  const { upstream, send } = await start(t)
  t.equal((await send('GET', '/admin/export')).status, 403, 'the route itself: 403 without a token')
  for (const [method, path] of PROTECTED_VARIANTS) {
    const r = await send(method, path)
    t.equal(r.status, 403, `${method} ${path}: 403`)
    if (method === 'GET') t.match(r.json, { error: 'gate_access_denied', message: 'capability required: GET /admin/export is deny-by-default' })
  }
  t.notOk(upstream.received.some(r => r.url.toLowerCase().includes('admin')), 'none of them reached the upstream')
  t.equal((await send('HEAD', '/pets')).status, 200, 'HEAD on a safe GET route is forwarded')
  t.equal((await send('GET', '/PETS')).status, 200, 'and so is a safe GET in another case')
})

t.test('--case-sensitive-routes: exact case only, and a case variant of a protected route is still denied', async t => {
  const { gate, send } = await start(t, ['--case-sensitive-routes'])
  t.match(gate.output(), /case-sensitive paths, HEAD decided as GET/)
  for (const [method, path] of PROTECTED_VARIANTS) t.equal((await send(method, path)).status, 403, `${method} ${path}: 403`)
  t.equal((await send('GET', '/pets')).status, 200)
})

t.test('method overrides are refused before evaluation and never forwarded', async t => {
  const { upstream, send } = await start(t)
  const attempts: [string, Record<string, string>, string | undefined][] = [
    ['/pets/search', { 'x-http-method-override': 'DELETE' }, undefined],
    ['/pets/search', { 'X-HTTP-Method': 'DELETE' }, undefined],
    ['/pets/search', { 'x-method-override': 'DELETE' }, undefined],
    ['/pets/search?_method=DELETE', {}, undefined],
    ['/pets/search', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=x&_method=DELETE'],
  ]
  for (const [path, headers, body] of attempts) {
    const r = await send('POST', path, headers, body)
    t.equal(r.status, 400, `POST ${path} ${JSON.stringify(headers)}: 400`)
    t.match(r.json, { error: 'gate_bad_request', message: /^method override \(.+\) is refused/ })
  }
  t.notOk(upstream.received.some(r => r.url.startsWith('/pets/search')), 'none reached the upstream')
  t.equal((await send('POST', '/pets/search', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=_method')).status, 200, 'a form value that merely says _method passes')
})

t.test("the client's forwarding headers are replaced by the peer Gate saw", async t => {
  const { upstream, send } = await start(t)
  const r = await send('GET', '/echo', { 'x-forwarded-for': '203.0.113.7', 'X-Forwarded-Host': 'admin.internal', forwarded: 'for=203.0.113.7', 'x-real-ip': '203.0.113.7', host: 'gate.example' })
  t.equal(r.status, 200)
  const got = upstream.received.find(x => x.url === '/echo')!
  t.equal(got.headers['x-forwarded-for'], '127.0.0.1')
  t.equal(got.headers['x-forwarded-host'], 'gate.example')
  t.equal(got.headers['x-forwarded-proto'], 'http')
  t.equal(got.headers.forwarded, undefined)
  t.equal(got.headers['x-real-ip'], undefined)
})
