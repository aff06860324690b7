// Reading the body once: over a real node:http server, Gate's read leaves the stream readable for the
// next reader with the same bytes (chunked or not), stops at the limit, and refuses a drained stream.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { request } from 'undici'
import { readBody } from './read-body.js'

type Handler = (req: IncomingMessage) => Promise<unknown>

async function serve(t: Test, handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    handler(req).then(
      value => res.end(JSON.stringify(value)),
      (err: { code?: string; status?: number }) => {
        res.statusCode = err.status ?? 500
        res.end(JSON.stringify({ error: err.code }))
      },
    )
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

t.test('a Node stream is read, then replayed to the next reader with the same bytes', async t => {
  const url = await serve(t, async req => {
    const bytes = await readBody(req, req.headers, 1 << 20)
    const again = await readAll(req)
    return { gate: bytes === null ? null : Buffer.from(bytes).toString('utf8'), again }
  })
  const body = 'x'.repeat(100_000) + 'ü'
  const fixed = await request(url, { method: 'POST', body })
  t.same(await fixed.body.json(), { gate: body, again: body })
  const chunked = await request(url, {
    method: 'POST',
    body: Readable.from(
      (async function* () {
        yield Buffer.from('part one, ')
        await new Promise(r => setImmediate(r))
        yield Buffer.from('part two')
      })(),
    ),
  })
  t.same(await chunked.body.json(), { gate: 'part one, part two', again: 'part one, part two' })
  const empty = await request(url, { method: 'GET' })
  t.same(await empty.body.json(), { gate: null, again: '' }, 'a bodyless request is not read')
})

t.test('the limit is enforced while reading, from Content-Length first', async t => {
  const url = await serve(t, req => readBody(req, req.headers, 10))
  const declared = await request(url, { method: 'POST', body: 'x'.repeat(11) })
  t.equal(declared.statusCode, 413)
  t.same(await declared.body.json(), { error: 'gate_payload_too_large' })
  const streamed = await request(url, { method: 'POST', body: Readable.from([Buffer.from('x'.repeat(6)), Buffer.from('x'.repeat(6))]) })
  t.equal(streamed.statusCode, 413)
  await streamed.body.dump()
})

t.test('a stream drained before Gate fails closed instead of hashing nothing', async t => {
  const url = await serve(t, async req => {
    await readAll(req)
    return readBody(req, req.headers, 1 << 20)
  })
  const res = await request(url, { method: 'POST', body: '{"a":1}' })
  t.equal(res.statusCode, 500)
  t.same(await res.body.json(), { error: 'gate_evaluation_failed' })
})

t.test('bytes and text sources are taken as given; zero bytes is bodyless', async t => {
  t.same(await readBody(new TextEncoder().encode('ab'), {}, 10), new TextEncoder().encode('ab'))
  t.same(await readBody('ü', {}, 10), new TextEncoder().encode('ü'))
  t.equal(await readBody(new Uint8Array(0), {}, 10), null)
  t.equal(await readBody(null, {}, 10), null)
  await t.rejects(readBody('x'.repeat(11), {}, 10), { code: 'gate_payload_too_large' })
})
