import t from 'tap'
import { forwardedHeaders, selectRequestHeaders, selectResponseHeaders } from './forward-headers.js'

t.test('request headers lose hop-by-hop, host, content-length and every X-Gate-*; the rest keep case and order', async t => {
  const raw = [
    'Host', 'proxy.local',
    'X-Trace', 'a',
    'Connection', 'keep-alive, X-Private',
    'X-Private', 'drop me',
    'Keep-Alive', 'timeout=5',
    'Proxy-Connection', 'keep-alive',
    'Proxy-Authorization', 'Basic x',
    'TE', 'trailers',
    'Trailer', 'x',
    'Transfer-Encoding', 'chunked',
    'Upgrade', 'websocket',
    'Content-Length', '3',
    'X-Gate-Capability', 'tok',
    'x-gate-execution-nonce', '0'.repeat(32),
    'Expect', '100-continue',
    'Authorization', 'Bearer upstream-token',
    'X-Gate-Approval-Id', 'ap1',
    'X-Gate-Receipt-Id', 'fake',
    'x-gate-anything', '1',
    'x-trace', 'b',
  ]
  t.same(selectRequestHeaders(raw, 'keep-alive, X-Private'), [
    'X-Trace', 'a',
    'Authorization', 'Bearer upstream-token',
    'x-trace', 'b',
  ])
})

t.test('response headers lose hop-by-hop and Connection-named headers', async t => {
  const out = selectResponseHeaders({
    'content-type': 'text/plain',
    connection: 'close, x-private',
    'x-private': '1',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'set-cookie': ['a=1', 'b=2'],
    'content-length': '3',
  })
  t.same({ ...out }, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'content-length': '3' })
})

t.test("the client's forwarding claims are dropped; Gate's own name the peer it saw", async t => {
  const raw = ['X-Forwarded-For', '10.0.0.1', 'x-forwarded-host', 'admin.internal', 'X-Forwarded-Proto', 'https', 'X-Forwarded-Prefix', '/admin', 'Forwarded', 'for=10.0.0.1', 'X-Real-IP', '10.0.0.1', 'X-Kept', '1']
  t.same(selectRequestHeaders(raw, undefined), ['X-Kept', '1'])
  const req = { socket: { remoteAddress: '127.0.0.1' }, headers: { host: 'gate.local:9090' } } as unknown as Parameters<typeof forwardedHeaders>[0]
  t.same(forwardedHeaders(req), ['x-forwarded-proto', 'http', 'x-forwarded-for', '127.0.0.1', 'x-forwarded-host', 'gate.local:9090'])
})

t.test('headers naming another path, method or host to route on are dropped', async t => {
  const raw = ['X-Original-URL', '/admin', 'X-Rewrite-URL', '/admin', 'X-Original-URI', '/admin', 'X-Original-Method', 'DELETE', 'X-Original-Host', 'admin.internal', 'X-Envoy-Original-Path', '/admin', 'X-Host', 'admin.internal', 'X-HTTP-Host-Override', 'admin.internal', 'X-Original-Kept', '1']
  t.same(selectRequestHeaders(raw, undefined), ['X-Original-Kept', '1'])
})
