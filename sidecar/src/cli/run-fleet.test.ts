// `gate run` in a fleet: a tool grant issued at trust-control (`gate capability issue --tool
// --control-url`) is honoured on the wire, and its revocation at trust-control reaches the agent
// through the fleet's revocation feed as a pushed capability_revoked, then denies the next call.
import t from 'tap'
import { join } from 'node:path'
import { createSigner, generateSecret } from '@gate/sdk'
import { runGate } from '../testing/spawn-gate.js'
import { FLEET_TOKEN, revokeCentrally, startTrustControl } from '../testing/fleet.js'
import { FIXTURE_TOOL_SERVER, startGateRun } from '../testing/wire-run.js'

t.test('a revocation at trust-control is pushed to the agent through the revocation feed', async t => {
  const dir = t.testdir()
  const control = await startTrustControl(t, dir)
  const gate = await startGateRun(t, ['--receipt-store', join(dir, 'edge', 'receipts.db'), '--control-url', control.url, '--no-transparency-log', '--tool-server', FIXTURE_TOOL_SERVER], { GATE_CONTROL_TOKEN: FLEET_TOKEN })
  const subject = createSigner({ secret: generateSecret() }).publicKey
  const issued = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fx:echo', '--control-url', control.url, '--json'], { env: { GATE_CONTROL_TOKEN: FLEET_TOKEN } })
  t.equal(issued.code, 0, issued.stderr)
  const line = issued.stdout.trim()
  const id = (JSON.parse(line) as { id: string }).id
  gate.agent.send({ type: 'tool_call_request', id: 'e1', capability_token: line, server_id: 'fx', tool: 'echo', params: { text: 'fleet' } })
  t.match((await gate.agent.frame('tool_call_response', 'e1')).result, { status: 'ok' }, 'a grant issued at trust-control is honoured')
  await revokeCentrally(control.url, id)
  t.same(await gate.agent.frame('capability_revoked'), { type: 'capability_revoked', id })
  gate.agent.send({ type: 'tool_call_request', id: 'e2', capability_token: line, server_id: 'fx', tool: 'echo', params: { text: 'fleet' } })
  t.same((await gate.agent.frame('tool_call_response', 'e2')).result, { status: 'err', error: { code: 'capability_revoked' } })
})
