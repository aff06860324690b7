// The framing rules of spec 03 (Native messages, Errors, Limits), byte by byte.
import t from 'tap'
import { FrameReader } from './frame-reader.js'
import { MAX_FRAME_PAYLOAD_BYTES } from './limits.js'

const frame = (payload: string) => {
  const body = new TextEncoder().encode(payload)
  const out = new Uint8Array(4 + body.length)
  new DataView(out.buffer).setUint32(0, body.length, false)
  out.set(body, 4)
  return out
}
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const prefix = (length: number) => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, length, false)
  return out
}

t.test('the prefix is a 4-byte big-endian count of the payload only', async t => {
  const bytes = frame('{"type":"heartbeat"}')
  t.same([...bytes.subarray(0, 4)], [0, 0, 0, 20])
  t.same(new FrameReader().push(bytes).map(text), ['{"type":"heartbeat"}'])
})

t.test('frames split anywhere, and several in one read, come out whole and in order', async t => {
  const bytes = new Uint8Array([...frame('{"a":1}'), ...frame('{"b":22}'), ...frame('{}')])
  for (let split = 0; split <= bytes.length; split++) {
    const reader = new FrameReader()
    const out = [...reader.push(bytes.subarray(0, split)), ...reader.push(bytes.subarray(split))]
    t.same(out.map(text), ['{"a":1}', '{"b":22}', '{}'], `split at ${split}`)
    t.equal(reader.buffered, 0)
  }
  const reader = new FrameReader()
  const byteByByte = [...bytes].flatMap(b => reader.push(new Uint8Array([b])))
  t.same(byteByByte.map(text), ['{"a":1}', '{"b":22}', '{}'], 'one byte at a time')
})

t.test('an advertised length over 16 MiB is message too large as soon as the prefix is read', async t => {
  const reader = new FrameReader()
  t.throws(() => reader.push(prefix(MAX_FRAME_PAYLOAD_BYTES + 1)), { code: 'gate_wire_message_too_large', name: 'WireProtocolError', kind: 'message_too_large' })
  t.throws(() => reader.push(new Uint8Array([1])), { name: 'WireProtocolError', kind: 'connection_closed' }, 'the reader stays failed')
  t.throws(() => new FrameReader().push(prefix(0xffffffff)), { name: 'WireProtocolError', kind: 'message_too_large' })
})

t.test('exactly 16 MiB is allowed: the limit is inclusive', async t => {
  const reader = new FrameReader()
  t.same(reader.push(prefix(MAX_FRAME_PAYLOAD_BYTES)), [])
  const payload = new Uint8Array(MAX_FRAME_PAYLOAD_BYTES).fill(0x20)
  const out = reader.push(payload)
  t.equal(out.length, 1)
  t.equal(out[0]!.length, MAX_FRAME_PAYLOAD_BYTES)
})

t.test('EOF before a whole prefix or payload is connection closed, and nothing partial is delivered', async t => {
  for (const cut of [1, 3, 4, 10]) {
    const reader = new FrameReader()
    const bytes = frame('{"type":"heartbeat"}').subarray(0, cut)
    t.same(reader.push(bytes), [], `nothing delivered from ${cut} bytes`)
    t.throws(() => reader.end(), { code: 'gate_wire_connection_closed', name: 'WireProtocolError', kind: 'connection_closed' }, `EOF after ${cut} bytes`)
  }
  const clean = new FrameReader()
  clean.push(frame('{}'))
  t.doesNotThrow(() => clean.end(), 'EOF between frames is a clean end')
})

t.test('a zero-length payload is delivered empty (its parser then refuses it)', async t => {
  t.same(new FrameReader().push(prefix(0)).map(p => p.length), [0])
})
