// End to end through the real `gate run` (fixture MCP server, driven agent): streamed chunks, a call
// cancelled by the agent hanging up, calls left incomplete by a tool server that dies mid-stream, and a
// revocation pushed to the agent mid-session.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'undici'
import { createSigner, generateSecret, signCapability, type CapabilityToken, type CoreReceipt } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate } from '../testing/spawn-gate.js'
import { FIXTURE_TOOL_SERVER, startGateRun } from '../testing/wire-run.js'

const CONTROL_TOKEN = 'control-token-for-wire-tests'
const now = () => Math.floor(Date.now() / 1000)

async function setup(t: Test) {
  const files = await gateFiles(t)
  const gate = await startGateRun(t, ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--tool-server', FIXTURE_TOOL_SERVER], { GATE_CONTROL_TOKEN: CONTROL_TOKEN })
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  const token: CapabilityToken = signCapability(
    { schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 6).join('')}`, subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'fx', tool_name: '*' }] }, issued_at: now() - 10, expires_at: now() + 3600 },
    authority,
  )
  return { ...files, gate, token }
}

const call = (id: string, token: unknown, tool: string, params: Record<string, unknown> = {}) => ({ type: 'tool_call_request', id, capability_token: token, server_id: 'fx', tool, params })

async function listed(db: string, ...filters: string[]): Promise<CoreReceipt[]> {
  const r = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', ...filters])
  if (r.code !== 0) throw new Error(r.stderr)
  return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
}

t.test('progress streams as tool_call_chunk frames, zero-based and in order, before the response', async t => {
  const { gate, token } = await setup(t)
  gate.agent.send(call('p1', token, 'progress'))
  await gate.agent.waitFor(e => e.message?.id === 'p1' && e.message?.chunk_index === 1)
  gate.agent.send(call('r1', token, 'release'))
  const response = await gate.agent.frame('tool_call_response', 'p1')
  t.same(response.result, { status: 'ok', value: { content: [{ type: 'text', text: 'done' }] } })
  t.same(
    gate.agent.framesOf('p1').map(f => [f.type, f.chunk_index, f.data]),
    [
      ['tool_call_chunk', 0, { progress: 1, total: 2 }],
      ['tool_call_chunk', 1, { progress: 2, total: 2 }],
      ['tool_call_response', undefined, undefined],
    ],
  )
  t.match(response.receipt, { decision: { verdict: 'allow' }, tool_name: 'progress' })
})

t.test('an agent that hangs up mid-stream cancels its call: a cancelled receipt names the decision', async t => {
  const { gate, token, db } = await setup(t)
  gate.agent.send(call('p1', token, 'progress'))
  await gate.agent.waitFor(e => e.message?.id === 'p1' && e.message?.chunk_index === 1)
  gate.agent.end()
  await gate.waitForOutput(/call\(s\) in flight; cancelling them: the agent closed the connection/)
  gate.agent.exit(0)
  t.equal(await gate.exited, 0)
  const [decision, final] = await listed(db, '--tool-name', 'progress')
  t.match(decision, { decision: { verdict: 'allow' } })
  t.match(final, { decision: { verdict: 'cancelled', reason: 'the agent closed the connection' }, metadata: { gate_decision_receipt_id: decision!.id } })
})

t.test('a tool server that dies mid-stream leaves its calls incomplete, with the chunks received and a receipt', async t => {
  const { gate, token } = await setup(t)
  gate.agent.send(call('p1', token, 'progress'))
  await gate.agent.waitFor(e => e.message?.id === 'p1' && e.message?.chunk_index === 1)
  gate.agent.send(call('x1', token, 'crash'))
  const response = await gate.agent.frame('tool_call_response', 'p1')
  t.match(response.result, { status: 'incomplete', chunks_received: 2, reason: /exited/ })
  t.match(response.receipt, { decision: { verdict: 'incomplete' }, tool_name: 'progress' })
  const crashed = await gate.agent.frame('tool_call_response', 'x1')
  t.match(crashed.result, { status: 'incomplete', chunks_received: 0 })
  gate.agent.send(call('e1', token, 'echo', { text: 'after' }))
  t.match((await gate.agent.frame('tool_call_response', 'e1')).result, { status: 'incomplete', reason: /exited/ }, 'a later call is decided and recorded, and cannot complete')
})

t.test('a revocation mid-session is pushed as capability_revoked; later calls with it fail capability_revoked', async t => {
  const { gate, token } = await setup(t)
  gate.agent.send(call('e1', token, 'echo', { text: 'before' }))
  t.match((await gate.agent.frame('tool_call_response', 'e1')).result, { status: 'ok' })
  const revoked = await httpRequest(`${gate.controlUrl}/v1/revocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ capabilityId: token.id }),
  })
  t.equal(revoked.statusCode, 200, await revoked.body.text())
  t.same(await gate.agent.frame('capability_revoked'), { type: 'capability_revoked', id: token.id })
  gate.agent.send(call('e2', token, 'echo', { text: 'after' }))
  const after = await gate.agent.frame('tool_call_response', 'e2')
  t.same(after.result, { status: 'err', error: { code: 'capability_revoked' } })
  t.match(after.receipt, { decision: { verdict: 'deny', guard: 'RevocationGuard' } })
  gate.agent.send({ type: 'list_capabilities' })
  t.same((await gate.agent.frame('capability_list')).capabilities, [], 'a revoked capability is no longer listed')
})
