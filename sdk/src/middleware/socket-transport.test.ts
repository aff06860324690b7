// The socket transport against real node:http servers, over TCP and over a Unix socket: keep-alive
// reuse, the connection limit, the deadline, refused and dropped connections, chunked answers, and
// close() waiting for what is in flight.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { parseSidecarUrl } from './sidecar-url.js'
import { createSocketTransport } from './socket-transport.js'
import type { SidecarTransport } from './sidecar-client.js'
import { listenForTest, unreachableSidecarUrl, type TestTransport } from './testing/index.js'

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' }

interface TestServer {
  url: string
  /** Connections accepted so far. */
  connections: number
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[]
}

async function serve(t: Test, transport: TestTransport, handler: (req: IncomingMessage, res: ServerResponse, body: string) => void, keepAliveTimeoutMs = 5000): Promise<TestServer> {
  const sockets = new Set<Socket>()
  const state: TestServer = { url: '', connections: 0, requests: [] }
  const server = createServer({ keepAliveTimeout: keepAliveTimeoutMs }, async (req, res) => {
    let body = ''
    for await (const c of req) body += (c as Buffer).toString('utf8')
    state.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
    handler(req, res, body)
  })
  server.on('connection', (socket: Socket) => {
    state.connections++
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const { url, cleanup } = await listenForTest(server, transport)
  state.url = url
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    server.close()
    await once(server, 'close')
    cleanup()
  })
  return state
}

function transportTo(t: Test, url: string, options: { timeoutMs?: number; connections?: number } = {}): SidecarTransport {
  const target = parseSidecarUrl(url)
  if (target.kind === 'https') throw new Error('no https here')
  const transport = createSocketTransport(target, url, { timeoutMs: options.timeoutMs ?? 5000, connections: options.connections ?? 4 })
  t.teardown(() => transport.close())
  return transport
}

const answerJson = (res: ServerResponse, status: number, text: string) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

for (const kind of ['tcp', 'unix'] as const) {
  t.test(`${kind}: requests go out whole and answers come back; one connection serves them in turn`, async t => {
    const server = await serve(t, kind, (req, res, body) => answerJson(res, req.url === '/missing' ? 404 : 200, JSON.stringify({ echo: body, path: req.url })))
    const transport = transportTo(t, server.url)
    const body = JSON.stringify({ name: 'Rex ü', n: 1 })
    for (let i = 0; i < 5; i++) {
      const res = await transport.send('POST', '/gate/evaluate', { ...JSON_HEADERS, 'x-gate-capability': 'e30' }, body)
      t.equal(res.status, 200)
      t.same(JSON.parse(res.text), { echo: body, path: '/gate/evaluate' })
    }
    const live = await transport.send('GET', '/gate/live', { accept: 'application/json' })
    t.equal(live.status, 200)
    t.equal((await transport.send('GET', '/missing', {})).status, 404, 'a non-200 answer is returned, not thrown')
    t.equal(server.connections, 1, 'keep-alive: one connection for every sequential request')
    t.equal(server.requests[0]?.headers['content-length'], String(Buffer.byteLength(body)))
    t.equal(server.requests[0]?.headers['x-gate-capability'], 'e30')
    t.equal(server.requests[5]?.method, 'GET')
    t.equal(server.requests[5]?.headers['content-length'], undefined, 'a GET carries no body framing')
  })

  t.test(`${kind}: concurrent requests use at most \`connections\` sockets, the rest wait`, async t => {
    const held: ServerResponse[] = []
    const server = await serve(t, kind, (_req, res) => {
      held.push(res)
      if (held.length === 2) setImmediate(() => held.splice(0).forEach(r => answerJson(r, 200, '{}')))
    })
    const transport = transportTo(t, server.url, { connections: 2 })
    const answers = await Promise.all(Array.from({ length: 6 }, () => transport.send('POST', '/gate/evaluate', JSON_HEADERS, '{}')))
    t.same(answers.map(a => a.status), [200, 200, 200, 200, 200, 200])
    t.equal(server.connections, 2)
  })

  t.test(`${kind}: a chunked answer is read whole`, async t => {
    const server = await serve(t, kind, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"verdict":')
      setImmediate(() => res.end('{"verdict":"allow"}}'))
    })
    const res = await transportTo(t, server.url).send('POST', '/gate/evaluate', JSON_HEADERS, '{}')
    t.same(JSON.parse(res.text), { verdict: { verdict: 'allow' } })
  })

  t.test(`${kind}: no answer within timeoutMs is gate_timeout, and the connection is not reused`, async t => {
    let calls = 0
    const server = await serve(t, kind, (_req, res) => {
      if (++calls > 1) answerJson(res, 200, '{}')
    })
    const transport = transportTo(t, server.url, { timeoutMs: 100 })
    await t.rejects(transport.send('POST', '/gate/evaluate', JSON_HEADERS, '{}'), { code: 'gate_timeout', status: 504 })
    t.equal((await transport.send('POST', '/gate/evaluate', JSON_HEADERS, '{}')).status, 200)
    t.equal(server.connections, 2, 'the timed-out connection was dropped')
  })

  t.test(`${kind}: nothing listening is gate_sidecar_unreachable`, async t => {
    const url = await unreachableSidecarUrl(kind)
    await t.rejects(transportTo(t, url).send('POST', '/gate/evaluate', JSON_HEADERS, '{}'), { code: 'gate_sidecar_unreachable', status: 503 })
  })

  t.test(`${kind}: a connection dropped before the whole answer is gate_sidecar_unreachable`, async t => {
    const server = await serve(t, kind, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"verdict":', () => res.socket?.destroy())
    })
    await t.rejects(transportTo(t, server.url).send('POST', '/gate/evaluate', JSON_HEADERS, '{}'), { code: 'gate_sidecar_unreachable' })
  })

  t.test(`${kind}: an idle connection is not reused past the server's Keep-Alive timeout less a second`, async t => {
    // keepAliveTimeout 50 ms: node announces `Keep-Alive: timeout=0`, so a request written on that
    // connection could meet the server closing it; the transport opens a new one instead
    const server = await serve(t, kind, (_req, res) => answerJson(res, 200, '{}'), 50)
    const transport = transportTo(t, server.url)
    t.equal((await transport.send('GET', '/gate/live', {})).status, 200)
    t.equal((await transport.send('GET', '/gate/live', {})).status, 200)
    t.equal(server.connections, 2)
  })

  t.test(`${kind}: close() lets requests in flight finish, then refuses new ones`, async t => {
    let release: (() => void) | undefined
    const server = await serve(t, kind, (_req, res) => {
      release = () => answerJson(res, 200, '{"late":true}')
    })
    const transport = transportTo(t, server.url)
    const inFlight = transport.send('POST', '/gate/evaluate', JSON_HEADERS, '{}')
    while (server.requests.length === 0) await new Promise(r => setImmediate(r))
    const closed = transport.close()
    release?.()
    t.same(JSON.parse((await inFlight).text), { late: true })
    await closed
    await t.rejects(transport.send('GET', '/gate/live', {}), { code: 'gate_sidecar_unreachable' })
  })
}

t.test('a header value holding a line break is never written', async t => {
  const server = await serve(t, 'tcp', (_req, res) => answerJson(res, 200, '{}'))
  const transport = transportTo(t, server.url)
  await t.rejects(transport.send('POST', '/gate/evaluate', { ...JSON_HEADERS, 'x-gate-approval-id': 'a\r\nx-evil: 1' }, '{}'), { code: 'gate_evaluation_failed' })
  t.equal(server.requests.length, 0)
})

t.test('an http URL with a base path keeps it; the Host header names the sidecar', async t => {
  const server = await serve(t, 'tcp', (_req, res) => answerJson(res, 200, '{}'))
  await transportTo(t, `${server.url}/base`).send('GET', '/gate/live', {})
  t.equal(server.requests[0]?.url, '/base/gate/live')
  t.equal(server.requests[0]?.headers.host, new URL(server.url).host)
})
