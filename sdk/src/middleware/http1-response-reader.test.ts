// The HTTP/1.1 response reader of the socket transport: every framing, fed whole and in arbitrary
// pieces, and the ambiguous or oversized answers it refuses (each a gate_evaluation_failed).
import t from 'tap'
import fc from 'fast-check'
import { Http1ResponseReader, type Http1Response } from './http1-response-reader.js'

const LIMIT = 1024

/**
 * Feeds `bytes` cut at `cuts`, each piece through one buffer that is overwritten after every read (as
 * the transport's read buffer is); the response, or 'incomplete' when the bytes end before it does.
 */
function read(bytes: Buffer, cuts: number[] = [], limit = LIMIT): Http1Response | 'incomplete' {
  const reader = new Http1ResponseReader(limit, '/gate/evaluate')
  const points = [...new Set(cuts.filter(c => c > 0 && c < bytes.length))].sort((a, b) => a - b)
  const shared = Buffer.alloc(bytes.length)
  let from = 0
  for (const to of [...points, bytes.length]) {
    bytes.copy(shared, 0, from, to)
    const response = reader.push(shared.subarray(0, to - from))
    if (response !== undefined) {
      if (to !== bytes.length) throw new Error('answered before its last byte')
      // a body may be a view of the read buffer: taken before the next read
      return { ...response, body: Buffer.from(response.body) }
    }
    shared.fill(0x7e)
    from = to
  }
  return 'incomplete'
}

const raw = (text: string) => Buffer.from(text, 'utf8')
const BODY = '{"verdict":{"verdict":"allow"},"ü":"é"}'
const LENGTH = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\nKeep-Alive: timeout=65\r\n\r\n${BODY}`
const CHUNKED = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\n${BODY.slice(0, 5)}\r\n${Buffer.byteLength(BODY.slice(5)).toString(16)}\r\n${BODY.slice(5)}\r\n0\r\nx-trailer: 1\r\n\r\n`

t.test('Content-Length, chunked and close-delimited bodies read whole, in any pieces', async t => {
  const cases: [string, string, boolean][] = [
    ['content-length', LENGTH, true],
    ['chunked', CHUNKED, true],
    ['HTTP/1.0', `HTTP/1.0 200 OK\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`, false],
    ['Connection: close', `HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`, false],
  ]
  for (const [name, text, keepAlive] of cases) {
    const bytes = raw(text)
    await fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), cuts => {
        const response = read(bytes, cuts)
        if (response === 'incomplete') return false
        return response.status === 200 && response.body.toString('utf8') === BODY && response.keepAlive === keepAlive
      }),
      { numRuns: 200, seed: 33 },
    )
    t.pass(`${name}: 200 random cuttings read the same body`)
  }
  t.equal((read(raw(LENGTH)) as Http1Response).keepAliveSeconds, 65, 'Keep-Alive timeout read')
})

t.test('a body ended by the close is complete only at end()', async t => {
  const reader = new Http1ResponseReader(LIMIT, '/gate/live')
  t.equal(reader.push(raw(`HTTP/1.1 200 OK\r\n\r\n${BODY}`)), undefined)
  const response = reader.end()
  t.equal(response.body.toString('utf8'), BODY)
  t.equal(response.keepAlive, false)
  const cut = new Http1ResponseReader(LIMIT, '/gate/live')
  cut.push(raw(LENGTH.slice(0, -3)))
  t.throws(() => cut.end(), { code: 'gate_evaluation_failed', message: /closed before the answer was complete/ })
})

t.test('interim 1xx answers are skipped; 204 has no body', async t => {
  const response = read(raw(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n${LENGTH}`)) as Http1Response
  t.equal(response.status, 200)
  t.equal(response.body.toString('utf8'), BODY)
  const empty = read(raw('HTTP/1.1 204 No Content\r\n\r\n')) as Http1Response
  t.equal(empty.status, 204)
  t.equal(empty.body.length, 0)
})

t.test('ambiguous, malformed or oversized answers are refused', async t => {
  const cases: [string, string, RegExp][] = [
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n', /status line/],
    ['HTTP/2 status line', 'HTTP/2 200\r\n\r\n', /status line/],
    ['Content-Length and Transfer-Encoding', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n', /Transfer-Encoding/],
    ['a coding other than chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', /Transfer-Encoding/],
    ['conflicting Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', /Content-Length/],
    ['Content-Length list that disagrees', 'HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n{}', /Content-Length/],
    ['negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /Content-Length/],
    ['folded header line', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 0\r\n\r\n', /header line/],
    ['header without a name', 'HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 0\r\n\r\n', /header line/],
    ['bytes after the answer', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK', /after the end/],
    ['a malformed chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /chunk size/],
    ['a chunk longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n', /longer than its size/],
    ['switching protocols', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /switch protocols/],
    ['a declared body over the limit', `HTTP/1.1 200 OK\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`, /exceeds 1024 bytes/],
    ['chunks over the limit', `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n${'x'.repeat(1024)}\r\n1\r\n`, /exceeds 1024 bytes/],
    ['a close-delimited body over the limit', `HTTP/1.1 200 OK\r\n\r\n${'x'.repeat(LIMIT + 1)}`, /exceeds 1024 bytes/],
    ['an endless head', `HTTP/1.1 200 OK\r\nX-Pad: ${'x'.repeat(17 * 1024)}`, /head exceeds/],
  ]
  for (const [name, text, message] of cases) t.throws(() => read(raw(text)), { code: 'gate_evaluation_failed', status: 502, message }, name)
})
