// bearerToken over real requests: one Authorization header with one Bearer token, or nothing.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { bearerToken } from './bearer-token.js'

/** Sends raw header lines to a real server and returns what bearerToken made of them. */
async function tokenOf(t: Test, headerLines: string[]): Promise<string | undefined> {
  let seen: string | undefined = 'not called'
  const server = createServer((req: IncomingMessage, res) => {
    seen = bearerToken(req)
    res.end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1')
  socket.write(`GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${headerLines.map(l => `${l}\r\n`).join('')}\r\n`)
  socket.resume()
  await once(socket, 'close')
  return seen
}

t.test('one Bearer header gives its token; the scheme is case-insensitive', async t => {
  t.equal(await tokenOf(t, ['Authorization: Bearer abc']), 'abc')
  t.equal(await tokenOf(t, ['authorization: bearer   abc  ']), 'abc')
  t.equal(await tokenOf(t, ['AUTHORIZATION: BEARER abc']), 'abc')
})

t.test('no header, another scheme, an empty or a two-part token give nothing', async t => {
  for (const lines of [[], ['Authorization: Basic abc'], ['Authorization: Bearer'], ['Authorization: Bearer '], ['Authorization: Bearer a b'], ['Authorization:']]) {
    t.equal(await tokenOf(t, lines), undefined, JSON.stringify(lines))
  }
})

t.test('a repeated Authorization header gives nothing, whichever value comes first', async t => {
  t.equal(await tokenOf(t, ['Authorization: Bearer good', 'Authorization: Bearer other']), undefined)
  t.equal(await tokenOf(t, ['Authorization: Bearer good', 'authorization: Bearer good']), undefined, 'even the same value twice')
  t.equal(await tokenOf(t, ['Authorization: Bearer good', 'X-Authorization: Bearer other']), 'good', 'other header names do not count')
})
