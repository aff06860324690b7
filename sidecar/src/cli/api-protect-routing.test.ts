// Route matching that cannot be sidestepped (issue 24, item 2) and the request as the upstream gets it
// (item 10), through the real `gate api protect` in front of a real upstream. The attacks: HEAD and
// letter case on a deny-by-default GET route fell through to the method rule and were forwarded;
// `;` parameters and an encoded slash reach the same route on upstreams that normalize; method-override
// headers and `_method` let a POST run as DELETE; a client's X-Forwarded-For reached the upstream as is.
import t, { type Test } from 'tap'
import { request } from 'undici'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'
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
    const receiptId = res.headers['x-gate-receipt-id']
    return { status: res.statusCode, text, receiptId: typeof receiptId === 'string' ? receiptId : undefined, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
  }
  return { gate, upstream, send, db }
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

t.test('client headers an upstream could route on never reach it', async t => {
  const { upstream, send } = await start(t)
  const hostile = {
    'X-Original-URL': '/admin/export',
    'X-Rewrite-URL': '/admin/export',
    'X-Original-Method': 'DELETE',
    'X-Forwarded-Prefix': '/admin',
    'X-Gate-Receipt-Id': 'fake',
    'X-Gate-Verdict': 'allow',
    'X-Gate-Approval-Id': 'appr_fake',
    'X-Gate-Capability': 'not-a-token',
  }
  const r = await send('GET', '/echo', { ...hostile, 'x-app-header': 'kept' })
  t.equal(r.status, 200)
  const got = upstream.received.find(x => x.url === '/echo')!
  for (const name of Object.keys(hostile)) t.equal(got.headers[name.toLowerCase()], undefined, `${name} is not forwarded`)
  t.equal(got.headers['x-app-header'], 'kept', 'other headers are')
  t.notOk(got.rawHeaders.some(h => /^x-gate-/i.test(h)), 'no X-Gate-* header at all')
})

// Every reading an upstream may apply to these paths reaches GET /admin/export (deny-by-default): an
// encoded slash decoded as a separator, a trailing slash ignored, both at once, a format suffix
// dropped (Spring's suffix patterns, Rails' `.:format`), a `;` parameter cut before or after decoding.
const READINGS_OF_ADMIN_EXPORT = [
  '/admin/export%2F',
  '/admin%2Fexport%2F',
  '/admin%2Fexport',
  '/admin/export/',
  '/admin/export.json',
  '/admin/export.tar.gz',
  '/admin%2Fexport.json',
  '/admin/export.json/',
  '/Admin/Export.JSON',
  '/admin/export;x=1.json',
  '/admin;x%2Fy/export',
]

t.test('every reading of a protected path is denied with a receipt and never reaches the upstream', async t => {
  const { gate, upstream, send, db } = await start(t)
  const ids: string[] = []
  for (const path of READINGS_OF_ADMIN_EXPORT) {
    const r = await send('GET', path)
    t.equal(r.status, 403, `GET ${path}: 403`)
    t.match(r.json, { error: 'gate_access_denied' }, `GET ${path}: gate_access_denied`)
    t.ok(r.receiptId, `GET ${path}: X-Gate-Receipt-Id`)
    if (r.receiptId !== undefined) ids.push(r.receiptId)
  }
  t.same(upstream.received.map(r => r.url), [], 'none of them reached the upstream')
  const live = (await (await request(`${gate.url}/gate/live`)).body.json()) as { kernel_key: string }
  const { missing, invalid, receipts } = await checkStoredReceipts(db, ids, live.kernel_key)
  t.same([missing, invalid], [[], []], 'each denial is a stored receipt that verifies')
  t.ok([...receipts.values()].every(r => r.verdict.verdict === 'deny' && r.response_status === 403), 'each records the deny')
})

t.test('readings that reach no stricter route are forwarded as sent', async t => {
  const { upstream, send } = await start(t)
  for (const path of ['/pets/42.json', '/pets/group%2Fname', '/reports/2024.csv']) {
    t.equal((await send('GET', path)).status, 200, `GET ${path}: 200`)
    t.ok(upstream.received.some(r => r.url === path), `GET ${path}: forwarded byte for byte`)
  }
})
