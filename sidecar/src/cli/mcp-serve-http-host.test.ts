// End to end: the Host header on the real `gate mcp serve-http` (DNS rebinding: a browser page whose
// name now resolves to the edge sends its own name as Host, and the edge must not answer it). On a
// loopback listener only loopback names are accepted (localhost, 127.0.0.1, [::1], with no port or
// the listener's), plus --allowed-host names; on any other listener only --allowed-host names. Every
// route of the listener is covered (/mcp, /admin/*, unknown paths), each refusal a 403 gate_forbidden
// in the gate.hosted.error.v1 body.
import t from 'tap'
import { request } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { checkHostedError, initializeMessage, startGateMcpHttp } from '../testing/mcp-http-session.js'
import { runGate } from '../testing/spawn-gate.js'

const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const ADMIN_TOKEN = 'admin-token-for-mcp-host-tests'
const AGENT_TOKEN = 'agent-token-for-mcp-host-tests'

interface HostAnswer {
  status: number
  body: string
}

/** A request to 127.0.0.1:`port` with `host` as its Host header, as a rebound browser sends it (fetch cannot). */
function sendWithHost(port: number, host: string, method: string, path: string, headers: Record<string, string> = {}): Promise<HostAnswer> {
  const body = method === 'POST' ? JSON.stringify(initializeMessage()) : undefined
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host, accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers } }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const portOf = (url: string) => Number(new URL(url).port)

t.test('a loopback listener answers loopback names only, on every route', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-tool', 'echo', '--allowed-host', 'tunnel.test', ...FIXTURE], { env: { GATE_ADMIN_TOKEN: ADMIN_TOKEN } })
  const port = portOf(gate.url)
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const refused = ['evil.example', `evil.example:${port}`, `localhost:${port === 1 ? 2 : 1}`, `127.0.0.1:${port + 1}`, '127.0.0.1.evil.example', 'localhost.evil.example', `[::1]x:${port}`, `localhost:${port}x`]
  for (const host of refused) {
    for (const [method, path, headers] of [['POST', '/mcp', {}], ['GET', '/admin/health', admin], ['GET', '/elsewhere', {}]] as const) {
      const r = await sendWithHost(port, host, method, path, headers)
      t.equal(r.status, 403, `Host ${host}, ${method} ${path}: 403`)
      checkHostedError(r.status, r.body)
      t.match(JSON.parse(r.body), { error: 'gate_forbidden', message: /Host .* is not allowed/ }, `Host ${host}, ${method} ${path}: gate_forbidden`)
    }
  }
  const accepted = ['localhost', `localhost:${port}`, '127.0.0.1', `127.0.0.1:${port}`, '[::1]', `[::1]:${port}`, 'LOCALHOST', `Localhost:${port}`, 'tunnel.test', 'tunnel.test:9000']
  for (const host of accepted) {
    t.equal((await sendWithHost(port, host, 'POST', '/mcp')).status, 200, `Host ${host}: initialize answered`)
  }
  t.equal((await sendWithHost(port, `localhost:${port}`, 'GET', '/admin/health', admin)).status, 200, 'the admin routes answer a loopback Host')
})

t.test('a non-loopback listener answers --allowed-host names only', async t => {
  const files = await gateFiles(t)
  const tokens = join(files.dir, 'tokens')
  writeFileSync(tokens, `${AGENT_TOKEN}\n`)
  const gate = await startGateMcpHttp(t, ['--listen', '0.0.0.0:0', '--allow-plaintext-remote', '--admission-token-file', tokens, '--allowed-host', 'mcp.example.test', '--allowed-host', '[::1]', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, ...FIXTURE])
  const port = portOf(gate.url)
  const agent = { authorization: `Bearer ${AGENT_TOKEN}` }
  for (const host of ['mcp.example.test', `mcp.example.test:${port}`, 'mcp.example.test:443', 'MCP.Example.Test', '[::1]']) {
    t.equal((await sendWithHost(port, host, 'POST', '/mcp', agent)).status, 200, `Host ${host}: answered`)
  }
  for (const host of ['evil.example', `127.0.0.1:${port}`, 'localhost', 'mcp.example.test.evil.example', 'sub.mcp.example.test']) {
    const r = await sendWithHost(port, host, 'POST', '/mcp', agent)
    t.equal(r.status, 403, `Host ${host}: 403`)
    checkHostedError(r.status, r.body)
    t.match(JSON.parse(r.body), { error: 'gate_forbidden', message: /--allowed-host/ })
  }
})

t.test('a non-loopback listener without --allowed-host, or a malformed one, is refused at start (exit 2)', async t => {
  const files = await gateFiles(t)
  const tokens = join(files.dir, 'tokens')
  writeFileSync(tokens, `${AGENT_TOKEN}\n`)
  const common = ['mcp', 'serve-http', '--allow-plaintext-remote', '--admission-token-file', tokens, '--allow-ephemeral-receipts', '--authority-seed-file', files.seed]
  const none = await runGate([...common, '--listen', '0.0.0.0:0', ...FIXTURE])
  t.equal(none.code, 2)
  t.match(none.stderr, /needs --allowed-host/)
  for (const bad of ['mcp.example.test:443', 'http://mcp.example.test', '', 'a b']) {
    const r = await runGate([...common, '--listen', '127.0.0.1:0', '--allowed-host', bad, ...FIXTURE])
    t.equal(r.code, 2, `--allowed-host "${bad}": exit 2`)
    t.match(r.stderr, /--allowed-host/)
  }
})
