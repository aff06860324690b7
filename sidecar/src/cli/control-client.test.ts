import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { closedPortUrl } from '@gate/sdk/middleware-testing'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createControlClient, resolveClientControlToken, UNAUTHORIZED_HINT } from './control-client.js'

const NO_DEFAULT = { defaultTokenFile: '/nonexistent/.gate/control-token' }

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** A control server on loopback whose answer each test sets; it records what it was sent. */
async function controlServer(t: Test, answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: Seen[] = []
  const server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    answer(req, res)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('post sends JSON with the bearer token and resolves to the parsed 200 answer', async t => {
  const server = await controlServer(t, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
  const client = createControlClient({ controlUrl: server.url, controlToken: 'secret-token' })
  t.same(await client.post('/v1/revocations', { capability_id: 'cap-1' }), { ok: true })
  t.equal(server.seen[0]!.method, 'POST')
  t.equal(server.seen[0]!.url, '/v1/revocations')
  t.equal(server.seen[0]!.headers.authorization, 'Bearer secret-token')
  t.equal(server.seen[0]!.headers['content-type'], 'application/json')
  t.same(JSON.parse(server.seen[0]!.body), { capability_id: 'cap-1' })
  t.equal(server.seen[0]!.headers.connection, 'close', 'no keep-alive: the CLI never waits on an idle socket')
})

t.test('get without a token sends no Authorization; getText returns any status as received', async t => {
  const server = await controlServer(t, (req, res) => res.writeHead(req.url === '/missing' ? 404 : 200).end(req.url === '/missing' ? '{"error":"gate_not_found"}' : '[1,2]'))
  const client = createControlClient({ controlUrl: server.url }, NO_DEFAULT)
  t.same(await client.get('/v1/receipts/query?limit=2'), [1, 2])
  t.equal(server.seen[0]!.headers.authorization, undefined)
  t.same(await client.getText('/missing'), { status: 404, text: '{"error":"gate_not_found"}' })
})

t.test('a --control-url with a path keeps it as the prefix of every route', async t => {
  const server = await controlServer(t, (_req, res) => res.writeHead(200).end('{}'))
  await createControlClient({ controlUrl: `${server.url}/gate-admin/` }).get('/v1/receipts/query?limit=1')
  await createControlClient({ controlUrl: `${server.url}/gate-admin` }).post('/v1/revocations', {})
  await createControlClient({ controlUrl: server.url }).get('/v1/health')
  t.same(
    server.seen.map(s => s.url),
    ['/gate-admin/v1/receipts/query?limit=1', '/gate-admin/v1/revocations', '/v1/health'],
  )
})

t.test('a non-200 answer throws its message (or its error code); a non-JSON body says so', async t => {
  let answer = { status: 401, body: '{"error":"gate_unauthorized","message":"a control token is required"}' }
  const server = await controlServer(t, (_req, res) => res.writeHead(answer.status).end(answer.body))
  const client = createControlClient({ controlUrl: server.url })
  await t.rejects(client.post('/v1/capabilities/issue', {}), { message: 'POST /v1/capabilities/issue answered 401: a control token is required' })
  answer = { status: 409, body: '{"error":"gate_conflict"}' }
  await t.rejects(client.get('/x'), { message: 'GET /x answered 409: gate_conflict' })
  answer = { status: 200, body: '<html>' }
  await t.rejects(client.get('/x'), { message: 'GET /x answered 200 with a non-JSON body' })
})

t.test('an unreachable URL, a silent server, a stalled body and an oversized answer are refused with the origin', async t => {
  const closed = await closedPortUrl()
  await t.rejects(createControlClient({ controlUrl: closed }).get('/x'), { message: new RegExp(`^cannot reach ${closed}: .*ECONNREFUSED`) })

  const silent = await controlServer(t, () => undefined)
  await t.rejects(createControlClient({ controlUrl: silent.url }, { headersTimeoutMs: 100 }).get('/x'), { message: `cannot reach ${silent.url}: no answer within 100 ms` })

  const stalled = await controlServer(t, (_req, res) => res.writeHead(200, { 'content-length': '100' }).write('{"a":'))
  await t.rejects(createControlClient({ controlUrl: stalled.url }, { bodyTimeoutMs: 100 }).get('/x'), { message: `cannot reach ${stalled.url}: the answer stalled for 100 ms` })

  const cut = await controlServer(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '100' }).write('{"a":')
    setImmediate(() => res.socket?.destroy())
  })
  await t.rejects(createControlClient({ controlUrl: cut.url }).get('/x'), { message: new RegExp(`^cannot reach ${cut.url}: `) })

  const huge = await controlServer(t, (_req, res) => res.writeHead(200).end(`[${'1,'.repeat(1000)}1]`))
  await t.rejects(createControlClient({ controlUrl: huge.url }, { maxResponseBytes: 1000 }).get('/x'), { message: `cannot reach ${huge.url}: the answer is longer than 1000 bytes` })
})

t.test('a --control-url that is not http(s) is a usage error', async t => {
  t.throws(() => createControlClient({ controlUrl: 'not a url' }), { message: '--control-url must be an http(s) URL, got "not a url"' })
  t.throws(() => createControlClient({ controlUrl: 'ftp://127.0.0.1/' }), { message: '--control-url must be http or https, got ftp:' })
})

t.test('the token comes from GATE_CONTROL_TOKEN / --control-token, else --control-token-file, else the default file', async t => {
  const dir = t.testdir({ given: 'token-from-the-given-file-0123\n', default: 'token-from-the-default-file-0123\n' })
  const given = join(dir, 'given')
  const fallback = join(dir, 'default')
  t.equal(resolveClientControlToken({ controlToken: 'from-env-or-flag-0123456789', controlTokenFile: given }, fallback), 'from-env-or-flag-0123456789')
  t.equal(resolveClientControlToken({ controlTokenFile: given }, fallback), 'token-from-the-given-file-0123')
  t.equal(resolveClientControlToken({}, fallback), 'token-from-the-default-file-0123')
  t.equal(resolveClientControlToken({}, join(dir, 'absent')), undefined, 'no default file: no token')
  t.throws(() => resolveClientControlToken({ controlTokenFile: join(dir, 'absent') }, fallback), { message: /cannot read control token file .*absent: ENOENT/ })
  writeFileSync(join(dir, 'default'), 'rewritten-default-token-0123\n')
  const server = await controlServer(t, (_req, res) => res.writeHead(200).end('{}'))
  await createControlClient({ controlUrl: server.url }, { defaultTokenFile: fallback }).get('/v1/health')
  t.equal(server.seen[0]!.headers.authorization, 'Bearer rewritten-default-token-0123', 'the client sends the default file when given nothing')
})

t.test('a 401 names every way to give the token', async t => {
  const server = await controlServer(t, (_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"missing or invalid bearer token"}'))
  await t.rejects(createControlClient({ controlUrl: server.url }, NO_DEFAULT).post('/v1/revocations', {}), {
    message: `POST /v1/revocations answered 401: missing or invalid bearer token; ${UNAUTHORIZED_HINT}`,
  })
  t.match(UNAUTHORIZED_HINT, /GATE_CONTROL_TOKEN.*--control-token TOKEN.*--control-token-file PATH.*\.gate\/control-token/)
})
