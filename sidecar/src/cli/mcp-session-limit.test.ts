// End to end: SessionLimitGuard (--max-session-calls) reads the SessionContext the edge fills (spec 02
// `request_count`). Through the real `gate mcp serve` the call after the limit is denied and receipted
// with the guard's reason; through `gate mcp serve-http` two sessions in one process each count from
// zero. A limit flag that is not a number refuses the start.
import t from 'tap'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { CoreReceipt } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'
import { runGate } from '../testing/spawn-gate.js'

const CONTROL_TOKEN = 'control-token-for-session-limit-tests'
const LIMIT = /session mcp_[^ ]+ reached its limit of 2 tool calls \(this is call 3\)/

type Decided = CoreReceipt & { decision: { verdict: string; reason?: string; guard?: string } }

async function decisions(db: string): Promise<Decided[]> {
  const listed = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', 'echo'])
  return listed.stdout
    .trim()
    .split('\n')
    .map(line => JSON.parse(line) as Decided)
    .filter(r => (r.metadata as { gate_decision_receipt_id?: string } | undefined)?.gate_decision_receipt_id === undefined)
}

const echo = async (client: { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }, text: string) =>
  (await client.callTool({ name: 'echo', arguments: { text } })) as CallToolResult

t.test('gate mcp serve --max-session-calls 2: the third call is denied and receipted with the guard\'s reason', async t => {
  const files = await gateFiles(t)
  const args = ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'echo', '--max-session-calls', '2', '--', process.execPath, FIXTURE_SERVER_PATH]
  const gate = await startGateMcp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.notOk((await echo(gate.client, 'one')).isError)
  t.notOk((await echo(gate.client, 'two')).isError)
  const third = await echo(gate.client, 'three')
  t.equal(third.isError, true, 'the third call is denied')
  t.match(JSON.stringify(third.content), LIMIT)
  await gate.close()

  const receipts = await decisions(files.db)
  t.equal(receipts.length, 3)
  t.match(receipts.map(r => r.decision.verdict).sort(), ['allow', 'allow', 'deny'])
  const denied = receipts.find(r => r.decision.verdict === 'deny')!
  t.match(denied.decision, { guard: 'SessionLimitGuard', reason: LIMIT })
})

t.test('gate mcp serve-http --max-session-calls 2: each session counts from zero', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'echo', '--max-session-calls', '2', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  const first = (await gate.connect()).client
  t.notOk((await echo(first, 'one')).isError)
  t.notOk((await echo(first, 'two')).isError)
  t.match(JSON.stringify((await echo(first, 'three')).content), LIMIT, 'the first session is at its limit')
  const second = (await gate.connect()).client
  t.notOk((await echo(second, 'one')).isError, 'a new session starts from zero')
  t.notOk((await echo(second, 'two')).isError)
  t.equal((await echo(second, 'three')).isError, true, 'and has the same limit')
  t.equal((await echo(first, 'four')).isError, true, 'the first stays denied')
})

t.test('a session limit that is not a positive integer refuses the start', async t => {
  const run = await runGate(['mcp', 'serve', '--allow-ephemeral-receipts', '--max-session-calls', '0', '--', process.execPath, FIXTURE_SERVER_PATH])
  t.equal(run.code, 2)
  t.match(run.stderr, /--max-session-calls must be an integer of at least 1, got "0"/)
  const depth = await runGate(['mcp', 'serve', '--allow-ephemeral-receipts', '--max-delegation-depth', 'two', '--', process.execPath, FIXTURE_SERVER_PATH])
  t.match(depth.stderr, /--max-delegation-depth must be an integer of at least 0, got "two"/)
})
