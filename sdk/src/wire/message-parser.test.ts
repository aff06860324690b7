// Deserialization (spec 03, Errors): a payload that is not a valid message of the expected family is
// refused; both families, their exact field sets, and the ways JSON can be ambiguous.
import t from 'tap'
import { canonicalJson } from '../protocol/canonical-json.js'
import { parseAgentMessage, parseKernelMessage } from './message-parser.js'
import type { RawJson } from './raw-json.js'

const bytes = (s: string) => new TextEncoder().encode(s)
const token = { id: 'cap-1', issuer: 'ab'.repeat(32), subject: 'cd'.repeat(32), scope: { grants: [] }, issued_at: 1, expires_at: 2, signature: 'ef'.repeat(64) }
const request = { type: 'tool_call_request', id: 'c1', capability_token: token, server_id: 'fs', tool: 'echo', params: { n: 1 } }
const receipt = {
  id: 'a'.repeat(64), timestamp: 1, capability_id: '', tool_server: 'fs', tool_name: 'echo', action: { parameters: {}, parameter_hash: 'b'.repeat(64) },
  receipt_kind: 'mediated_decision', boundary_class: 'prevent', tool_origin: 'host_executed_provider_reported', redaction_mode: 'none', trust_level: 'mediated',
  decision: { verdict: 'allow' }, content_hash: 'c'.repeat(64), policy_hash: 'd'.repeat(64), kernel_key: 'e'.repeat(64), signature: 'f'.repeat(128),
}

t.test('every AgentMessage parses, the capability token kept as its received text', async t => {
  const spaced = JSON.stringify(request, null, 1)
  const parsed = parseAgentMessage(bytes(spaced)) as typeof request & { capability_token: RawJson }
  t.equal(parsed.capability_token.text, JSON.stringify(token, null, 1).replace(/\n/g, '\n '), 'the bytes as received')
  t.same(parsed.capability_token.value, token)
  t.same(parseAgentMessage(bytes('{"type":"heartbeat"}')), { type: 'heartbeat' })
  t.same(parseAgentMessage(bytes('{"type":"list_capabilities"}')), { type: 'list_capabilities' })
})

t.test('every KernelMessage parses; the receipt is kept as its received text', async t => {
  const text = canonicalJson(receipt)
  const response = parseKernelMessage(bytes(`{"id":"c1","receipt":${text},"result":{"status":"ok","value":null},"type":"tool_call_response"}`)) as { receipt: RawJson }
  t.equal(response.receipt.text, text)
  for (const m of [
    { type: 'tool_call_chunk', id: 'c1', chunk_index: 0, data: [1] },
    { type: 'capability_revoked', id: 'cap-1' },
    { type: 'heartbeat' },
  ]) t.same(parseKernelMessage(bytes(JSON.stringify(m))), m)
  const list = parseKernelMessage(bytes(JSON.stringify({ type: 'capability_list', capabilities: [token] }))) as { capabilities: RawJson[] }
  t.same(list.capabilities.map(c => c.value), [token])
})

t.test('a message of the other family is a deserialization failure', async t => {
  t.throws(() => parseAgentMessage(bytes('{"type":"capability_revoked","id":"x"}')), { name: 'WireProtocolError', kind: 'deserialization_failed' })
  t.throws(() => parseKernelMessage(bytes(JSON.stringify(request))), { name: 'WireProtocolError', kind: 'deserialization_failed' })
  t.throws(() => parseKernelMessage(bytes('{"type":"list_capabilities"}')), { name: 'WireProtocolError', kind: 'deserialization_failed' })
})

t.test('field sets are exact: a missing field or any other field is refused', async t => {
  for (const key of ['id', 'capability_token', 'server_id', 'tool', 'params']) {
    const { [key]: _dropped, ...rest } = request as Record<string, unknown>
    t.throws(() => parseAgentMessage(bytes(JSON.stringify(rest))), { name: 'WireProtocolError', kind: 'deserialization_failed' }, `without ${key}`)
  }
  t.throws(() => parseAgentMessage(bytes(JSON.stringify({ ...request, arguments: {} }))), { name: 'WireProtocolError', kind: 'deserialization_failed' }, 'another field')
  t.throws(() => parseAgentMessage(bytes('{"type":"heartbeat","at":1}')), { name: 'WireProtocolError', kind: 'deserialization_failed' })
  t.throws(() => parseKernelMessage(bytes('{"type":"tool_call_chunk","id":"c","chunk_index":0}')), { name: 'WireProtocolError', kind: 'deserialization_failed' }, 'a chunk without data')
  t.throws(() => parseKernelMessage(bytes('{"type":"tool_call_chunk","id":"c","chunk_index":0,"data":1,"more":2}')), { name: 'WireProtocolError', kind: 'deserialization_failed' })
})

t.test('garbage, non-objects, bad UTF-8, a byte-order mark and duplicate signed members are refused', async t => {
  const cases: [string, Uint8Array][] = [
    ['not JSON', bytes('garbage')],
    ['empty', bytes('')],
    ['an array', bytes('[]')],
    ['a string', bytes('"heartbeat"')],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d])],
    ['a BOM', bytes('\ufeff{"type":"heartbeat"}')],
    ['a lone surrogate', bytes('{"type":"heartbeat","x":"\\ud800"}')],
    ['two capability tokens', bytes(JSON.stringify(request).replace('"server_id"', `"capability_token":${JSON.stringify(token)},"server_id"`))],
  ]
  for (const [name, payload] of cases) t.throws(() => parseAgentMessage(payload), { code: 'gate_wire_deserialization_failed' }, name)
})

t.test('integers beyond double precision in params stay exact', async t => {
  const parsed = parseAgentMessage(bytes(JSON.stringify(request).replace('"n":1', '"n":9007199254740993'))) as unknown as { params: { n: unknown } }
  t.equal(parsed.params.n, 9007199254740993n)
})
