// readBody + sendError over a real node:http server: a body over the limit is answered 400 while the
// rest is read and dropped, so the client finishes sending and reads the answer on a connection that
// stays usable; a declared length too large to drain is answered at once and the connection closes.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { BodyTooLargeError, DISCARD_CAP_BYTES, readBody, type ReadBodyOptions } from './read-body.js'
import { sendError, sendJson } from './respond.js'

const LIMIT = 1024

async function startServer(t: Test, options?: ReadBodyOptions) {
  const errors: unknown[] = []
  const server = createServer((req, res) => {
    readBody(req, LIMIT, options).then(
      body => sendJson(res, 200, { length: body.length }),
      (err: unknown) => {
        errors.push(err)
        sendError(res, err)
      },
    )
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { port: (server.address() as AddressInfo).port, errors }
}

// Resolves once the answer is read AND the whole body was sent: the server may answer first.
function post(port: number, body: Buffer, headers: Record<string, string> = {}, agent?: Agent) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; text: string; reusedSocket: boolean }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers, agent }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, headers: res.headers, text, reusedSocket: req.reusedSocket }
        if (req.writableFinished) resolve(answer)
        else req.once('finish', () => resolve(answer))
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('a body within the limit is read whole', async t => {
  const { port } = await startServer(t)
  const r = await post(port, Buffer.alloc(LIMIT, 1))
  t.equal(r.status, 200)
  t.same(JSON.parse(r.text), { length: LIMIT })
})

t.test('a declared length over the limit: 400, the whole body is taken, the connection is reused', async t => {
  const { port, errors } = await startServer(t)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  // 4 MiB: far more than the socket buffers hold, so the client is still writing when the answer comes
  const big = await post(port, Buffer.alloc(4 * 1024 * 1024, 2), {}, agent)
  t.equal(big.status, 400)
  t.equal(JSON.parse(big.text).error, 'gate_bad_request')
  t.not(big.headers.connection, 'close')
  t.match(errors[0], { name: 'BodyTooLargeError', draining: true, limitBytes: LIMIT })
  const next = await post(port, Buffer.from('{}'), {}, agent)
  t.equal(next.status, 200, 'the next request on the same connection is served')
  t.equal(next.reusedSocket, true)
})

t.test('a chunked body that passes the limit: 400 once the limit is passed, the rest drained', async t => {
  const { port, errors } = await startServer(t)
  const r = await post(port, Buffer.alloc(256 * 1024, 3), { 'transfer-encoding': 'chunked' })
  t.equal(r.status, 400)
  t.match(errors[0], { name: 'BodyTooLargeError', draining: true })
})

t.test('a declared length past the discard cap: answered at once, and the connection closes', async t => {
  const { port, errors } = await startServer(t)
  // only the head and a few bytes are sent: the server must not wait for the rest
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${DISCARD_CAP_BYTES + 1}\r\n\r\nabc`)
  let answer = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (answer += chunk))
  await once(socket, 'close')
  t.match(answer, /^HTTP\/1\.1 400 /)
  t.match(answer, /\r\nconnection: close\r\n/i)
  t.match(errors[0], { name: 'BodyTooLargeError', draining: false })
  t.ok(errors[0] instanceof BodyTooLargeError)
})

t.test('a refused body that stops arriving: answered, then the connection closes at the drain deadline', async t => {
  const { port, errors } = await startServer(t, { drainDeadlineMs: 200 })
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  // declares 4 KiB over a 1 KiB limit (so it is drained), sends a little and then nothing more
  socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${4 * LIMIT}\r\n\r\nabc`)
  let answer = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (answer += chunk))
  socket.on('error', () => {})
  const started = Date.now()
  let timer: NodeJS.Timeout | undefined
  const closed = await Promise.race([once(socket, 'close').then(() => true), new Promise<boolean>(resolve => (timer = setTimeout(() => resolve(false), 10_000)))])
  clearTimeout(timer)
  socket.destroy()
  t.ok(closed, 'the server closed the connection instead of waiting for the rest')
  t.ok(Date.now() - started >= 150, 'not before the deadline')
  t.match(answer, /^HTTP\/1\.1 400 /, 'the answer came first')
  t.match(errors[0], { name: 'BodyTooLargeError', draining: true })
})
