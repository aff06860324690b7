// Framing faults against the real `gate run` (spec 03, Errors): each closes the transport without a
// frame in reply, Gate says why in its log, and a new connection works. One `gate run` for all: the
// driven agent opens a new connection after each fault.
import t from 'tap'
import { MAX_FRAME_PAYLOAD_BYTES } from '@gate/sdk/wire'
import { gateFiles } from '../testing/gate-files.js'
import { FIXTURE_TOOL_SERVER, startGateRun, type GateRun } from '../testing/wire-run.js'

const prefix = (length: number) => {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(length)
  return out
}
const frame = (text: string) => Buffer.concat([prefix(Buffer.byteLength(text)), Buffer.from(text)])

let gate!: GateRun
t.before(async () => {
  const files = await gateFiles(t)
  gate = await startGateRun(t, ['--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--tool-server', FIXTURE_TOOL_SERVER])
})
t.teardown(async () => {
  gate.agent.exit(0)
  await gate.exited
})

/** Sends `bytes` on a fresh connection; resolves once the kernel closed it, with the events meanwhile. */
async function fault(bytes: Buffer, then?: () => void) {
  await gate.agent.reconnect()
  const from = gate.agent.events.length
  gate.agent.bytes(bytes)
  then?.()
  const closed = await gate.agent.waitFor(e => e.event === 'closed', from)
  return { closed, frames: gate.agent.events.slice(from).filter(e => e.event === 'frame') }
}

t.test('an advertised length over 16 MiB closes the transport unanswered (message too large)', async t => {
  const { frames } = await fault(prefix(MAX_FRAME_PAYLOAD_BYTES + 1))
  t.same(frames, [], 'nothing sent back')
  await gate.waitForOutput(/advertised 16777217 payload bytes, more than the 16777216-byte limit/)
})

t.test('a payload that is not JSON closes the transport unanswered (deserialization failure)', async t => {
  const { frames } = await fault(frame('garbage'))
  t.same(frames, [])
  await gate.waitForOutput(/the agent message payload is not JSON/)
})

t.test('a kernel message, or an agent message with another field, is a deserialization failure', async t => {
  t.same((await fault(frame('{"type":"capability_revoked","id":"x"}'))).frames, [])
  t.same((await fault(frame('{"type":"heartbeat","extra":1}'))).frames, [])
  await gate.waitForOutput(/not a valid agent message/)
})

t.test('EOF in the middle of a frame closes the transport; the partial frame is never acted on', async t => {
  const whole = frame('{"type":"heartbeat"}')
  const { frames } = await fault(whole.subarray(0, 10), () => gate.agent.end())
  t.same(frames, [], 'the partial heartbeat is not answered')
  await gate.waitForOutput(/the connection ended in the middle of a frame \(6 of 20 payload bytes\)/)
})

t.test('after any of these a new connection is served as usual', async t => {
  await gate.agent.reconnect()
  const from = gate.agent.events.length
  gate.agent.bytes(frame('{"type":"heartbeat"}'))
  t.same((await gate.agent.waitFor(e => e.event === 'frame', from)).message, { type: 'heartbeat' })
})
