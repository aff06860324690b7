// An upstream that ends or resets its connection while the relay holds undici's parser paused (the
// client has not taken the last chunk yet): undici 7 asserted and the process ended
// (upstream-end-guard.ts). The client here is a response that never drains, the one fault a real
// client cannot be made to produce at exactly the upstream's last byte; the upstream is a raw node:net
// server writing the answer and closing at once.
import t, { type Test } from 'tap'
import { EventEmitter, once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { resolveProxyOptions } from './options.js'
import { UpstreamClient, type RelayOutcome } from './upstream-client.js'

/** A client that reads nothing: every write reports backpressure and 'drain' never comes. */
class StalledResponse extends EventEmitter {
  readonly chunks: Buffer[] = []
  ended = false
  writableFinished = false
  headersSent = false
  destroyedWith: Error | undefined
  write(chunk: Buffer): boolean {
    this.chunks.push(Buffer.from(chunk))
    return false
  }
  end(): this {
    this.ended = true
    this.writableFinished = true
    return this
  }
  destroy(err?: Error): this {
    this.destroyedWith = err
    return this
  }
}

/** A raw upstream answering every request with `answer`, then ending the socket (or resetting it). */
async function rawUpstream(t: Test, answer: string, close: (socket: Socket) => void = socket => socket.end()): Promise<string> {
  const server = createServer(socket => {
    socket.on('error', () => {})
    socket.once('data', () => {
      socket.write(answer)
      close(socket)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function relay(t: Test, upstream: string): Promise<{ outcome: RelayOutcome; res: StalledResponse }> {
  const client = new UpstreamClient(resolveProxyOptions({ upstream, upstreamTimeoutMs: 20_000 }))
  t.teardown(() => client.close())
  const res = new StalledResponse()
  const outcome = await client.relay({ method: 'GET', path: '/', headers: [], body: null }, res as unknown as ServerResponse, async () => {})
  return { outcome, res }
}

t.test('a Content-Length body and Connection: close, the client not reading: relayed whole', async t => {
  const upstream = await rawUpstream(t, 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello')
  const { outcome, res } = await relay(t, upstream)
  t.same(outcome, { kind: 'relayed' })
  t.equal(Buffer.concat(res.chunks).toString(), 'hello')
  t.ok(res.ended, 'the answer was ended')
})

t.test('an HTTP/1.0 body ended by the close, the client not reading: relayed whole', async t => {
  const upstream = await rawUpstream(t, 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello')
  const { outcome, res } = await relay(t, upstream)
  t.same(outcome, { kind: 'relayed' })
  t.equal(Buffer.concat(res.chunks).toString(), 'hello')
})

t.test('a reset while the parser is held paused: the exchange is cut, the process goes on', async t => {
  const upstream = await rawUpstream(t, 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nhello', socket => socket.resetAndDestroy())
  const { outcome, res } = await relay(t, upstream)
  t.equal(outcome.kind, 'cut')
  t.ok(res.destroyedWith, 'the client connection is cut')
})
