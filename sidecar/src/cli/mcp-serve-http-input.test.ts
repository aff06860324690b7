// End to end: what the real `gate mcp serve-http` answers to bad input (spec 03, "Hosted session
// transport" and "Errors"): each case gets the spec's status or JSON-RPC error, and the session it was
// sent on (when there is one) keeps working.
import t, { type Test } from 'tap'
import { request } from 'node:http'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { initializeMessage, rawPost, rawRequest, rawSession, startGateMcpHttp, type GateMcpHttp } from '../testing/mcp-http-session.js'

const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]

let gate: GateMcpHttp
t.before(async () => {
  const files = await gateFiles(t)
  gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-tool', 'echo', '--max-body-bytes', '65536', '--max-sessions', '20', '--max-sessions-per-caller', '100', ...FIXTURE])
})

const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ok' } } })

async function stillWorks(t: Test, id: string): Promise<void> {
  const ok = await rawPost(gate.url, echo(99), { 'mcp-session-id': id })
  t.equal(ok.status, 200, 'the session still answers')
  t.match(ok.text, /echo: ok/)
}

t.test('initialize: an unsupported version is -32600 with error.data.gateError; a session id or no id is refused', async t => {
  const old = await rawPost(gate.url, initializeMessage(1, '2025-06-18'))
  t.equal(old.status, 200)
  t.match(old.json(), { id: 1, error: { code: -32600, data: { gateError: { code: 1000, category: 'protocol', supportedVersions: ['2025-11-25'] } } } })
  t.notOk(old.headers.get('mcp-session-id'), 'no session is made')
  const withSession = await rawPost(gate.url, initializeMessage(2), { 'mcp-session-id': 'x' })
  t.equal(withSession.status, 400)
  t.match(withSession.json(), { error: 'gate_bad_request', message: /must not carry MCP-Session-Id/, transient: false })
  const asNotification = await rawPost(gate.url, { jsonrpc: '2.0', method: 'initialize', params: initializeMessage().params })
  t.equal(asNotification.status, 400)
  t.match(asNotification.json(), { error: 'gate_bad_request', message: /initialize is a request and needs an id/ })
  const ok = await rawPost(gate.url, initializeMessage(3))
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('content-type'), 'text/event-stream', 'a successful initialize answers an SSE stream')
  t.match(ok.headers.get('mcp-session-id'), /^[0-9a-f-]{36}$/)
  t.match(ok.text, /"protocolVersion":"2025-11-25"/)
})

t.test('ready-state methods wait for notifications/initialized', async t => {
  const init = await rawPost(gate.url, initializeMessage())
  const id = init.headers.get('mcp-session-id')!
  const early = await rawPost(gate.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id })
  t.equal(early.status, 409)
  t.match(early.json(), { error: 'gate_session_not_ready', message: /tools\/list waits for notifications\/initialized/, transient: true })
  t.equal((await rawPost(gate.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'mcp-session-id': id })).status, 200, 'ping is answered before')
  t.equal((await rawPost(gate.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id })).status, 202)
  await stillWorks(t, id)
})

t.test('missing, unknown and mismatched session headers', async t => {
  const id = await rawSession(gate.url)
  const missing = await rawPost(gate.url, echo(1))
  t.equal(missing.status, 400)
  t.match(missing.json(), { error: 'gate_bad_request', message: /MCP-Session-Id header is required/ })
  const unknown = await rawPost(gate.url, echo(2), { 'mcp-session-id': 'no-such-session' })
  t.equal(unknown.status, 404)
  t.match(unknown.json(), { error: 'gate_session_not_found', retry_guidance: /initialize a new session/ })
  t.equal((await rawRequest(gate.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': 'no-such-session' })).status, 404)
  const wrongVersion = await rawPost(gate.url, echo(3), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-03-26' })
  t.equal(wrongVersion.status, 400)
  t.match(wrongVersion.json(), { error: 'gate_protocol_version_mismatch', message: /MCP-Protocol-Version 2025-03-26 differs from the session's 2025-11-25/ })
  await stillWorks(t, id)
})

t.test('bodies: not JSON, not JSON-RPC, a batch, a notification where a request is required, too large', async t => {
  const id = await rawSession(gate.url)
  const on = { 'mcp-session-id': id }
  const notJson = await rawPost(gate.url, '{"jsonrpc": "2.0", "id": 1, "method": ', on)
  t.equal(notJson.status, 400)
  t.match(notJson.json(), { error: 'gate_bad_request', message: /not JSON/ })
  const notRpc = await rawPost(gate.url, { hello: 'world' }, on)
  t.equal(notRpc.status, 400)
  t.match(notRpc.json(), { error: 'gate_bad_request', message: /not a JSON-RPC 2.0 message/ })
  const batch = await rawPost(gate.url, [echo(1), echo(2)], on)
  t.equal(batch.status, 400)
  t.match(batch.json(), { error: 'gate_bad_request', message: /batches/ })
  const notification = await rawPost(gate.url, { jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }, on)
  t.equal(notification.status, 400)
  t.match(notification.json(), { error: 'gate_bad_request', message: /tools\/call is a request and needs an id/ })
  const huge = await rawPost(gate.url, { ...echo(4), params: { name: 'echo', arguments: { text: 'x'.repeat(70_000) } } }, on)
  t.equal(huge.status, 413)
  t.equal(huge.json().error, 'gate_payload_too_large')
  await stillWorks(t, id)
})

t.test('Accept, Content-Type and method: 406, 415, 405 (each body a gate.hosted.error.v1, checked by rawPost)', async t => {
  const id = await rawSession(gate.url)
  t.equal((await rawPost(gate.url, echo(1), { 'mcp-session-id': id, accept: 'application/json' })).status, 406)
  t.equal((await rawPost(gate.url, echo(1), { 'mcp-session-id': id, 'content-type': 'text/plain' })).status, 415)
  t.equal((await rawRequest(gate.url, 'GET', { accept: 'application/json', 'mcp-session-id': id })).status, 406)
  t.equal((await rawRequest(gate.url, 'PUT', { 'mcp-session-id': id })).status, 405)
  await stillWorks(t, id)
})

t.test('DNS rebinding: a foreign Origin or Host is 403; a loopback origin is allowed', async t => {
  const foreign = await rawPost(gate.url, initializeMessage(), { origin: 'http://evil.example' })
  t.equal(foreign.status, 403)
  t.match(foreign.json(), { error: 'gate_forbidden', message: /Origin http:\/\/evil.example is not allowed/ })
  // fetch cannot send another Host: node:http can, as a rebound browser would
  const status = await new Promise<number>((resolve, reject) => {
    const body = JSON.stringify(initializeMessage())
    const req = request(gate.url, { method: 'POST', headers: { host: 'evil.example:80', accept: 'application/json, text/event-stream', 'content-type': 'application/json' } }, res => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end(body)
  })
  t.equal(status, 403, 'a foreign Host on a loopback listener')
  t.equal((await rawPost(gate.url, initializeMessage(), { origin: 'http://localhost:3000' })).status, 200)
})

t.test('a flood of initialize stops at the session cap with 503; ended sessions free their places', async t => {
  const opened: string[] = []
  let refused
  for (let n = 0; n < 30 && refused === undefined; n++) {
    const r = await rawPost(gate.url, initializeMessage(n))
    if (r.status === 503) refused = r
    else opened.push(r.headers.get('mcp-session-id')!)
  }
  t.ok(refused, 'the cap answers 503')
  t.equal(refused!.headers.get('retry-after'), '1')
  t.match(refused!.json(), { error: 'gate_capacity_exhausted', message: /20 sessions are open/, transient: true })
  for (const id of opened) await rawRequest(gate.url, 'DELETE', { 'mcp-session-id': id })
  const id = await rawSession(gate.url)
  await stillWorks(t, id)
  await rawRequest(gate.url, 'DELETE', { 'mcp-session-id': id })
})

t.test('a header past the limit is refused by the HTTP parser (431)', async t => {
  const r = await rawPost(gate.url, initializeMessage(), { 'x-padding': 'x'.repeat(20_000) })
  t.equal(r.status, 431)
})
