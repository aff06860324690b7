import t from 'tap'
import { createRebindingGuard, readAllowedHost, splitHostHeader } from './rebinding-guard.js'

const request = (headers: Record<string, string>) => ({ headers })

t.test('a Host header splits into a lower-cased name and a port, or is not one', async t => {
  t.same(splitHostHeader('LocalHost:9190'), { name: 'localhost', port: '9190' })
  t.same(splitHostHeader('[::1]:80'), { name: '[::1]', port: '80' })
  t.same(splitHostHeader('[::1]'), { name: '[::1]', port: undefined })
  t.same(splitHostHeader('mcp.example.test'), { name: 'mcp.example.test', port: undefined })
  for (const bad of ['', ':80', 'a:b', 'a:80:81', '[::1', '[::1]x', 'a b', 'localhost.', 'x:123456', 'user@host']) t.equal(splitHostHeader(bad), undefined, JSON.stringify(bad))
})

t.test('--allowed-host takes a name or address without a port', async t => {
  t.equal(readAllowedHost('MCP.Example.Test'), 'mcp.example.test')
  t.equal(readAllowedHost('[::1]'), '[::1]')
  t.equal(readAllowedHost('10.0.0.7'), '10.0.0.7')
  for (const bad of ['mcp.example.test:443', 'http://x', '', '[nothex]', '::1', 'a/b']) t.throws(() => readAllowedHost(bad), { code: 'gate_invalid_config' }, JSON.stringify(bad))
})

t.test('a loopback listener: loopback names with no port or its own, and --allowed-host names with any', async t => {
  const guard = createRebindingGuard({ loopback: true, listenHost: '127.0.0.1', allowedHosts: ['tunnel.test'], allowedOrigins: [] })
  guard.bindPort(9190)
  for (const host of ['localhost', 'localhost:9190', '127.0.0.1', '127.0.0.1:9190', '[::1]:9190', 'LOCALHOST', 'tunnel.test:1']) t.equal(guard.refusal(request({ host })), undefined, host)
  for (const host of ['evil.example', 'localhost:9191', '127.0.0.2', 'localhost.evil.example']) t.match(guard.refusal(request({ host })), /is not allowed/, host)
  t.match(guard.refusal({ headers: {} }), /Host \(none\)/, 'no Host at all')
  t.equal(guard.refusal(request({ host: 'localhost', origin: 'http://localhost:3000' })), undefined, 'a loopback origin')
  t.match(guard.refusal(request({ host: 'localhost', origin: 'http://evil.example' })), /Origin/)
})

t.test("the listener's own loopback address is one of its names; before the port is bound, a Host with a port is refused", async t => {
  const guard = createRebindingGuard({ loopback: true, listenHost: '127.0.0.5', allowedHosts: [], allowedOrigins: [] })
  t.equal(guard.refusal(request({ host: '127.0.0.5' })), undefined)
  t.match(guard.refusal(request({ host: '127.0.0.5:9190' })), /is not allowed/)
})

t.test('another listener: --allowed-host names only', async t => {
  const guard = createRebindingGuard({ loopback: false, listenHost: '0.0.0.0', allowedHosts: ['mcp.example.test'], allowedOrigins: ['https://app.example.test'] })
  guard.bindPort(443)
  t.equal(guard.refusal(request({ host: 'mcp.example.test:8443' })), undefined)
  for (const host of ['localhost', '127.0.0.1:443', '0.0.0.0', 'evil.example']) t.match(guard.refusal(request({ host })), /an --allowed-host name/, host)
  t.equal(guard.refusal(request({ host: 'mcp.example.test', origin: 'https://app.example.test' })), undefined)
  t.match(guard.refusal(request({ host: 'mcp.example.test', origin: 'http://localhost:3000' })), /Origin/, 'no loopback origin off loopback')
})
