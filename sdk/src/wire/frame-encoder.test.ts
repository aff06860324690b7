// Writing frames: canonical JSON (RFC 8785) payloads, nested signed objects spliced in as received,
// and the 16 MiB limit enforced before anything is written.
import t from 'tap'
import { canonicalJson } from '../protocol/canonical-json.js'
import { encodeFrame, messageText } from './frame-encoder.js'
import { FrameReader } from './frame-reader.js'
import { parseAgentMessage, parseKernelMessage } from './message-parser.js'
import { RawJson } from './raw-json.js'
import { MAX_FRAME_PAYLOAD_BYTES } from './limits.js'

const token = { id: 'cap-1', issuer: 'ab'.repeat(32), subject: 'cd'.repeat(32), scope: { grants: [] }, issued_at: 1, expires_at: 2, signature: 'ef'.repeat(64) }

t.test('a payload is the canonical JSON of the message', async t => {
  const message = { type: 'tool_call_request' as const, tool: 'echo', server_id: 'fs', id: 'c1', params: { z: 1, a: [true, null, 'é'] }, capability_token: token }
  const payload = encodeFrame(message).subarray(4)
  t.equal(new TextDecoder().decode(payload), canonicalJson(message))
})

t.test('a raw capability token is written byte for byte when canonical', async t => {
  const text = canonicalJson({ ...token, big: 12345678901234567890n })
  const message = { type: 'tool_call_request' as const, id: 'c1', capability_token: new RawJson(text), server_id: 'fs', tool: 'echo', params: {} }
  t.ok(messageText(message).includes(`"capability_token":${text},`), 'spliced as is, big integer included')
  t.equal(messageText(message), canonicalJson({ ...message, capability_token: JSON.parse(canonicalJson({ ...token, big: 1 })) }).replace('"big":1', '"big":12345678901234567890'))
})

t.test('a raw object that is not canonical is written in canonical form, so the frame stays canonical', async t => {
  const spaced = JSON.stringify(token, null, 2)
  const message = { type: 'tool_call_request' as const, id: 'c1', capability_token: new RawJson(spaced), server_id: 'fs', tool: 'echo', params: {} }
  t.equal(messageText(message), canonicalJson({ ...message, capability_token: token }))
})

t.test('a receipt and a capability list round-trip through the parser with their bytes intact', async t => {
  const receiptText = canonicalJson({ id: 'r'.repeat(64), timestamp: 9007199254740993n })
  const response = { type: 'tool_call_response' as const, id: 'c1', result: { status: 'ok' as const, value: 1 }, receipt: new RawJson(receiptText) }
  const [payload] = new FrameReader().push(encodeFrame(response))
  t.ok(new TextDecoder().decode(payload).includes(receiptText))
  const list = { type: 'capability_list' as const, capabilities: [new RawJson(canonicalJson(token)), token] }
  t.equal(messageText(list), canonicalJson({ type: 'capability_list', capabilities: [token, token] }))
  const parsed = parseAgentMessage(encodeFrame({ type: 'tool_call_request', id: 'x', capability_token: new RawJson(canonicalJson(token)), server_id: 's', tool: 't', params: {} }).subarray(4))
  t.equal(((parsed as { capability_token: RawJson }).capability_token).text, canonicalJson(token))
  const back = parseKernelMessage(encodeFrame(list).subarray(4)) as { capabilities: RawJson[] }
  t.same(back.capabilities.map(c => c.text), [canonicalJson(token), canonicalJson(token)])
})

t.test('a message over 16 MiB is refused before anything is written', async t => {
  const value = 'x'.repeat(MAX_FRAME_PAYLOAD_BYTES)
  t.throws(() => encodeFrame({ type: 'tool_call_chunk', id: 'c', chunk_index: 0, data: value }), { name: 'WireProtocolError', kind: 'message_too_large' })
})
