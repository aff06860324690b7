// The body budget with a real node:http server: bytes are charged while a request is being answered,
// a body that would pass the per-connection or the server bound is refused with 503 (read and dropped,
// never buffered), and everything is released when the answer is done.
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { once } from 'node:events'
import { chargeBodyTo, createBodyBudget, type BodyBudgetOptions } from './body-budget.js'
import { readBody } from './read-body.js'
import { sendError, sendJson } from './respond.js'

async function start(t: Test, options: BodyBudgetOptions) {
  const budget = createBodyBudget(options)
  const held: (() => void)[] = []
  const outcomes: string[] = []
  let onOutcome: (() => void) | undefined
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    chargeBodyTo(req, res, budget)
    readBody(req, 1024 * 1024).then(
      body => {
        outcomes.push(`read ${body.length}`)
        onOutcome?.()
        // the first request is answered only when the test says so: its body stays charged till then
        if (req.url === '/hold') held.push(() => sendJson(res, 200, { length: body.length }))
        else sendJson(res, 200, { length: body.length })
      },
      err => {
        outcomes.push(`refused ${(err as Error).message}`)
        onOutcome?.()
        sendError(res, err)
      },
    )
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())).then(() => undefined, () => undefined))
  t.teardown(() => server.closeAllConnections())
  const port = (server.address() as { port: number }).port
  const nextOutcome = (count: number) =>
    new Promise<void>(resolve => {
      if (outcomes.length >= count) return resolve()
      onOutcome = () => outcomes.length >= count && resolve()
    })
  return { budget, held, outcomes, nextOutcome, port }
}

function post(path: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`), body])
}

t.test('pipelined bodies on one connection are refused past the per-connection bound, then released', async t => {
  const s = await start(t, { maxBytes: 1_000_000, maxBytesPerConnection: 1500 })
  const socket = connect(s.port, '127.0.0.1')
  let answers = ''
  socket.on('data', c => (answers += c.toString('latin1')))
  socket.write(Buffer.concat([post('/hold', Buffer.alloc(1000, 0x61)), post('/second', Buffer.alloc(1000, 0x62))]))
  await s.nextOutcome(2)
  t.same(s.outcomes, ['read 1000', 'refused too many request body bytes in flight on this connection; retry shortly'])
  t.equal(s.budget.inUse(), 1000, 'the held body is still charged')
  s.held.shift()!()
  await new Promise<void>(resolve => socket.on('data', () => /HTTP\/1\.1 503[\s\S]*HTTP|HTTP\/1\.1 200[\s\S]*HTTP\/1\.1 503/.test(answers) && resolve()))
  t.match(answers, /^HTTP\/1\.1 200 [\s\S]*HTTP\/1\.1 503 [\s\S]*retry-after: 1[\s\S]*"error":"gate_sidecar_unavailable"/i)
  socket.write(post('/third', Buffer.alloc(1000, 0x63)))
  await s.nextOutcome(3)
  t.equal(s.outcomes[2], 'read 1000', 'with the first answered, the connection takes a body again')
  socket.destroy()
})

t.test('bodies on different connections share the server bound', async t => {
  const s = await start(t, { maxBytes: 2500, maxBytesPerConnection: 100_000 })
  const a = connect(s.port, '127.0.0.1')
  const b = connect(s.port, '127.0.0.1')
  const c = connect(s.port, '127.0.0.1')
  t.teardown(() => [a, b, c].forEach(x => x.destroy()))
  a.write(post('/hold', Buffer.alloc(1000)))
  await s.nextOutcome(1)
  b.write(post('/hold', Buffer.alloc(1000)))
  await s.nextOutcome(2)
  c.write(post('/third', Buffer.alloc(1000)))
  await s.nextOutcome(3)
  t.match(s.outcomes[2], /^refused .* on this server/)
  t.equal(s.budget.inUse(), 2000)
  a.destroy()
  // a connection that goes away releases its charge
  await new Promise<void>(resolve => {
    const poll = () => (s.budget.inUse() === 1000 ? resolve() : setImmediate(poll))
    poll()
  })
  t.equal(s.budget.inUse(), 1000)
})
