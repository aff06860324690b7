// The native wire section (spec 03: Native messages, Errors, Limits): behaviours of a kernel's wire
// endpoint observable from an agent's side, each on its own connection. Framing faults must close the
// transport with nothing sent back; calls must be answered under their id with a signed receipt; every
// frame must be canonical JSON of a KernelMessage. Run against an endpoint without any token the suite
// could present: a call here is always one the kernel must deny.
import { validate } from '@gate/schemas'
import { canonicalJson, verifyCoreReceipt } from '@gate/sdk'
import type { CheckDefinition } from '../check.js'
import { fail } from '../check-outcome.js'
import type { ReceivedFrame, WireProbe } from './wire-probe.js'

export interface WireContext {
  /** A fresh connection to the endpoint under test; closed after the check. */
  connect(): Promise<WireProbe>
}

export interface WireCheck extends CheckDefinition {
  run(ctx: WireContext): Promise<void>
}

const MAX_PAYLOAD = 16_777_216
const TOOL_CALL_ERROR_CODES = new Set(['capability_denied', 'capability_expired', 'capability_revoked', 'policy_denied', 'tool_server_error', 'internal_error'])
const NOT_A_TOKEN = { id: 'gate-conformance-not-a-capability' }
const call = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'tool_call_request', id, capability_token: NOT_A_TOKEN, server_id: 'gate-conformance', tool: 'no-such-tool', params: { probe: true }, ...extra })
const prefix = (length: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(length)
  return b
}
const show = (f: ReceivedFrame | undefined) => (f === undefined ? 'nothing (closed)' : f.text.slice(0, 200))

async function answer(probe: WireProbe, index: number, what: string): Promise<Record<string, unknown>> {
  const frame = await probe.frame(index).catch(err => fail(`${what}: ${(err as Error).message}`))
  if (frame?.value === undefined) fail(`${what}: got ${show(frame)}`)
  return frame.value
}

/** The frames sent back before the transport closed: none is the only right answer to a framing fault. */
async function closesUnanswered(probe: WireProbe, what: string): Promise<void> {
  if (!(await probe.closesOrAnswers())) fail(`${what}: the transport is still open (spec 03: it is closed, no in-band resynchronization)`)
  if (probe.frames.length > 0) fail(`${what}: the kernel sent ${show(probe.frames[0])} before closing (nothing is sent back)`)
}

async function deniedWithReceipt(probe: WireProbe, id: string, what: string): Promise<void> {
  const response = await answer(probe, 0, what)
  if (response.type !== 'tool_call_response' || response.id !== id) fail(`${what}: expected the tool_call_response of ${id}, got ${JSON.stringify(response).slice(0, 200)}`)
  const result = response.result as { status?: unknown; error?: { code?: unknown } }
  if (result?.status !== 'err') fail(`${what}: a call the kernel cannot allow was answered ${JSON.stringify(result).slice(0, 200)}`)
  if (!TOOL_CALL_ERROR_CODES.has(String(result.error?.code))) fail(`${what}: ${JSON.stringify(result.error?.code)} is not a ToolCallError code`)
  const shape = validate('gate.receipt.v1', response.receipt)
  if (!shape.ok) fail(`${what}: the receipt is not a gate.receipt.v1: ${shape.errors[0]}`)
  const receipt = response.receipt as Record<string, unknown>
  if ((receipt.decision as { verdict?: unknown })?.verdict !== 'deny') fail(`${what}: the receipt's decision is ${JSON.stringify(receipt.decision)}, not a deny`)
  if (receipt.tool_server !== 'gate-conformance' || receipt.tool_name !== 'no-such-tool') fail(`${what}: the receipt names ${String(receipt.tool_server)}:${String(receipt.tool_name)}, not the call`)
  const check = verifyCoreReceipt(receipt)
  if (!check.receipt_id_valid || !check.signature_valid) fail(`${what}: the receipt does not verify (${check.failedStep}: ${check.detail})`)
}

export const WIRE_CHECKS: readonly WireCheck[] = Object.freeze([
  {
    id: 'wire.heartbeat',
    description: 'a heartbeat is answered with a heartbeat frame ({"type":"heartbeat"}, nothing else)',
    specRef: '03 Events (heartbeat frames answer liveness probes); Native messages',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send({ type: 'heartbeat' })
      const reply = await answer(probe, 0, 'heartbeat')
      if (JSON.stringify(reply) !== '{"type":"heartbeat"}') fail(`heartbeat answered ${JSON.stringify(reply)}`)
    },
  },
  {
    id: 'wire.capability_list',
    description: 'list_capabilities on a fresh connection is answered with capability_list and an empty capabilities array',
    specRef: '03 Native messages (capability_list: the capabilities this connection presented)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send({ type: 'list_capabilities' })
      const reply = await answer(probe, 0, 'list_capabilities')
      if (reply.type !== 'capability_list' || !Array.isArray(reply.capabilities) || reply.capabilities.length !== 0) fail(`list_capabilities answered ${JSON.stringify(reply).slice(0, 200)}`)
    },
  },
  {
    id: 'wire.denied_call_receipted',
    description: 'a tool_call_request presenting no valid capability is answered under its id with err, a ToolCallError code, and a signed deny receipt (gate.receipt.v1, id and signature verify)',
    specRef: '03 Native messages (tool_call_response, ToolCallResult, ToolCallError); What the service does 2 (a receipt for every outcome)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send(call('conformance-denied'))
      await deniedWithReceipt(probe, 'conformance-denied', 'a call without a valid capability')
    },
  },
  {
    id: 'wire.refused_combination',
    description: 'a tool_call_request with approval_token and non-empty approval_tokens is refused (err with a deny receipt), never evaluated into an allow',
    specRef: '03 Native messages (refused combinations before evaluation)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send(call('conformance-combination', { approval_token: { id: 'a' }, approval_tokens: [{ id: 'b' }] }))
      await deniedWithReceipt(probe, 'conformance-combination', 'approval_token with approval_tokens')
    },
  },
  {
    id: 'wire.frames_canonical',
    description: 'every frame the kernel sends is RFC 8785 canonical JSON of a KernelMessage (gate.wire.kernel_message.v1)',
    specRef: '03 Native messages (frame: one canonical JSON object; KernelMessage)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send({ type: 'heartbeat' })
      probe.send({ type: 'list_capabilities' })
      probe.send(call('conformance-canonical'))
      for (let i = 0; i < 3; i++) {
        const frame = await probe.frame(i).catch(err => fail((err as Error).message))
        if (frame?.value === undefined) fail(`frame ${i + 1} is not JSON: ${show(frame)}`)
        if (canonicalJson(frame.value) !== frame.text) fail(`frame ${i + 1} is not canonical JSON: ${show(frame)}`)
        const shape = validate('gate.wire.kernel_message.v1', frame.value)
        if (!shape.ok) fail(`frame ${i + 1} is not a KernelMessage: ${shape.errors[0]}`)
      }
    },
  },
  {
    id: 'wire.split_frames',
    description: 'a frame written one byte at a time is read whole, and two frames in one write are both answered',
    specRef: '03 Native messages (4-byte big-endian length prefix counting only the payload)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      const heartbeat = Buffer.from('{"type":"heartbeat"}')
      const frame = Buffer.concat([prefix(heartbeat.length), heartbeat])
      for (const byte of frame) probe.sendBytes(Buffer.from([byte]))
      await answer(probe, 0, 'a heartbeat sent byte by byte')
      probe.sendBytes(Buffer.concat([frame, frame]))
      await answer(probe, 2, 'the second of two heartbeats sent in one write')
    },
  },
  {
    id: 'wire.message_too_large',
    description: 'a frame advertising a payload over 16,777,216 bytes closes the transport with nothing sent back',
    specRef: '03 Limits (native frame payload at most 16 MiB); Errors (message too large)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.sendBytes(prefix(MAX_PAYLOAD + 1))
      await closesUnanswered(probe, 'an advertised length of 16 MiB + 1')
    },
  },
  {
    id: 'wire.garbage_closed',
    description: 'a payload that is not JSON closes the transport with nothing sent back',
    specRef: '03 Errors (deserialization failure closes the transport)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send('garbage, not JSON')
      await closesUnanswered(probe, 'a payload that is not JSON')
    },
  },
  {
    id: 'wire.wrong_family_closed',
    description: 'a KernelMessage sent to the kernel (capability_revoked) closes the transport with nothing sent back',
    specRef: '03 Errors (not valid JSON for the expected message family)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send({ type: 'capability_revoked', id: 'x' })
      await closesUnanswered(probe, 'a KernelMessage')
    },
  },
  {
    id: 'wire.extra_field_closed',
    description: 'an AgentMessage with a field its type does not have ({"type":"heartbeat","extra":true}) closes the transport with nothing sent back',
    specRef: '03 Native messages (exact field sets: no other fields); Errors',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      probe.send({ type: 'heartbeat', extra: true })
      await closesUnanswered(probe, 'a heartbeat with another field')
    },
  },
  {
    id: 'wire.eof_mid_frame',
    description: 'EOF after part of a frame closes the transport and the partial message is never acted on (a cut heartbeat is not answered)',
    specRef: '03 Errors (EOF before a full prefix or payload: no partial message is delivered)',
    required: true,
    async run(ctx) {
      const probe = await ctx.connect()
      const heartbeat = Buffer.from('{"type":"heartbeat"}')
      probe.sendBytes(Buffer.concat([prefix(heartbeat.length), heartbeat.subarray(0, 8)]))
      probe.end()
      await closesUnanswered(probe, 'a heartbeat cut off by EOF')
    },
  },
])
