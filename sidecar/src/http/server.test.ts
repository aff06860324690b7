// createGateServer over raw TCP, so the bytes on the wire are exactly the test's: requests node:http's
// parser refuses get the spec error body (405 with Allow and no body for an unknown method), and the
// request target is read as a path even when it starts with `//`.
import t, { type Test } from 'tap'
import { connect } from 'node:net'
import { validate } from '@gate/schemas'
import { sendJson } from '@gate/sdk/server'
import { Router } from './router.js'
import { createGateServer } from './server.js'
import { classifyClientError } from './client-error.js'

async function start(t: Test, withFallback = false) {
  const router = new Router().add('POST', '/gate/evaluate', (_req, res) => sendJson(res, 200, { routed: 'evaluate' }))
  const gate = createGateServer({ router, fallback: withFallback ? (req, res, url) => sendJson(res, 200, { fallback: req.url, path: url.pathname }) : undefined })
  const { port } = await gate.listen('127.0.0.1', 0)
  t.teardown(() => gate.drain(100))
  return port
}

interface RawAnswer {
  status: number
  head: string
  body: string
  /** The server closed the connection after answering. */
  closed: boolean
}

// Writes `bytes` and reads until the server closes the connection or 2 s pass.
function exchange(port: number, bytes: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    let closed = false
    const timer = setTimeout(() => socket.destroy(), 2000)
    socket.on('data', c => (data += c.toString('latin1')))
    socket.on('end', () => (closed = true))
    socket.on('error', reject)
    socket.on('close', () => {
      clearTimeout(timer)
      const [head = '', body = ''] = data.split('\r\n\r\n', 2)
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body, closed })
    })
    socket.write(bytes)
  })
}

function errorBodyOk(t: Test, body: string, what: string): void {
  const parsed = JSON.parse(body) as { error: string; message: string }
  const result = validate('gate.http.error_body.v1', parsed)
  t.ok(result.ok, `${what}: spec error body ${result.ok ? '' : result.errors.join('; ')}`)
  t.equal(parsed.error, 'gate_bad_request', what)
}

t.test('requests the parser refuses get a clear answer, and the connection closes', async t => {
  const port = await start(t)
  const unknown = await exchange(port, 'CONNECTX /gate/evaluate HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(unknown.status, 405, 'an unknown method token is a method outside the seven')
  t.match(unknown.head, /\r\nallow: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS/i)
  t.match(unknown.head, /\r\ncontent-length: 0/i)
  t.equal(unknown.body, '')
  t.ok(unknown.closed)

  const huge = await exchange(port, `GET /gate/live HTTP/1.1\r\nHost: x\r\nX-Junk: ${'a'.repeat(64 * 1024)}\r\n\r\n`)
  t.equal(huge.status, 431)
  errorBodyOk(t, huge.body, 'oversized headers')
  t.match(JSON.parse(huge.body), { message: /headers exceed \d+ bytes/ })
  t.ok(huge.closed)

  const framing = await exchange(port, 'POST /gate/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}')
  t.equal(framing.status, 400)
  errorBodyOk(t, framing.body, 'a malformed Content-Length')
  t.match(JSON.parse(framing.body), { message: /^malformed HTTP request \(HPE_/ })

  const tls = await exchange(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]))
  t.ok(tls.status === 400 || tls.status === 405, `a TLS hello on the plain port is refused (${tls.status})`)
  t.ok(tls.closed)

  const fine = await exchange(port, 'POST /gate/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
  t.equal(fine.status, 200, 'the server still answers well-formed requests')
})

t.test('routes see the path as sent: no `..` resolution, and `//` does not start an authority', async t => {
  const port = await start(t)
  const routedElsewhere = await exchange(port, 'POST //evil.example/gate/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
  t.equal(routedElsewhere.status, 404, '//host/gate/evaluate is not /gate/evaluate')
  for (const dotted of ['/pets/../gate/evaluate', '/%2e%2e/gate/evaluate', '/gate/./evaluate']) {
    const r = await exchange(port, `POST ${dotted} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
    t.equal(r.status, 404, `${dotted} is not resolved into /gate/evaluate`)
  }
  const notAUrl = await exchange(port, 'GET //:) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(notAUrl.status, 404, 'a target no URL parser accepts as an authority is still just a path (was a 500)')
  const asterisk = await exchange(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(asterisk.status, 400)
  errorBodyOk(t, asterisk.body, 'an asterisk-form target')
  const absolute = await exchange(port, 'GET http://upstream.example/gate/evaluate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(absolute.status, 400, 'absolute-form is for forward proxies')

  const proxied = await start(t, true)
  const r = await exchange(proxied, 'GET //evil.example/pets?a=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.same(JSON.parse(r.body), { fallback: '//evil.example/pets?a=1', path: '//evil.example/pets' }, 'the fallback gets the raw target and the same path')
  const dotted = await exchange(proxied, 'POST /pets/../gate/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
  t.match(JSON.parse(dotted.body), { fallback: '/pets/../gate/evaluate' }, 'a dotted path is the proxy\'s to judge, not a Gate route')
})

t.test('classifyClientError: the status and error for each parser failure', async t => {
  const err = (code?: string) => Object.assign(new Error('parse error'), { code })
  t.match(classifyClientError(err('HPE_HEADER_OVERFLOW'), 16384), { status: 431, error: { code: 'gate_bad_request', message: "the request's headers exceed 16384 bytes" } })
  t.match(classifyClientError(err('HPE_INVALID_METHOD'), 16384), { status: 405, headers: { allow: 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS' }, error: undefined })
  t.match(classifyClientError(err('ERR_HTTP_REQUEST_TIMEOUT'), 16384), { status: 408, error: { code: 'gate_bad_request' } })
  t.match(classifyClientError(err('HPE_INVALID_CHUNK_SIZE'), 16384), { status: 400, error: { message: 'malformed HTTP request (HPE_INVALID_CHUNK_SIZE)' } })
  t.match(classifyClientError(err(undefined), 16384), { status: 400, error: { message: 'malformed HTTP request' } })
})
