// Bad input at the real `gate mcp serve`: malformed JSON-RPC on its stdin gets a JSON-RPC error and
// the edge keeps serving; a wrapped server that writes garbage, hangs or crashes gives the agent an
// isError result with an incomplete receipt, and a crashed server is reported, never restarted.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { CoreReceipt } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { GATE_MAIN, runGate } from '../testing/spawn-gate.js'

const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const gateMeta = (result: unknown) => ((result as CallToolResult)._meta as { gate: Record<string, string> }).gate

t.test('malformed JSON-RPC gets -32700 or -32600 with id null, and the edge keeps serving', async t => {
  const child = spawn(process.execPath, [GATE_MAIN, 'mcp', 'serve', '--allow-ephemeral-receipts', ...FIXTURE], { stdio: ['pipe', 'pipe', 'ignore'] })
  t.teardown(() => void child.kill())
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, unknown>
  child.stdin.write('this is not json\n')
  t.match(await next(), { jsonrpc: '2.0', id: null, error: { code: -32700 } })
  child.stdin.write('{"hello":"world"}\n')
  t.match(await next(), { jsonrpc: '2.0', id: null, error: { code: -32600 } })
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init }) + '\n')
  t.match(await next(), { id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'gate' } } })
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 7 } }) + '\n')
  t.match(await next(), { id: 2, error: { code: -32603 } }, "the SDK's answer to params its CallToolRequest schema rejects")
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { ...init, protocolVersion: '2025-11-25' } }) + '\n')
  t.match(await next(), { id: 3 }, 'still answering')
})

t.test('a wrapped server that writes garbage, hangs or crashes: isError with an incomplete receipt; a crash is reported, not restarted', async t => {
  const files = await gateFiles(t)
  const allow = ['echo', 'garbage', 'hang', 'crash'].flatMap(name => ['--allow-tool', name])
  const gate = await startGateMcp(t, ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--tool-timeout-secs', '1', ...allow, ...FIXTURE])
  t.match(await gate.client.callTool({ name: 'garbage', arguments: {} }), { content: [{ text: 'answered after garbage' }] }, 'a garbage line is skipped')
  const hung = await gate.client.callTool({ name: 'hang', arguments: {} })
  t.match(hung, { isError: true })
  t.match(gateMeta(hung), { verdict: 'incomplete', reason: 'the wrapped MCP server did not answer in time' })
  const crashed = await gate.client.callTool({ name: 'crash', arguments: {} })
  t.match(gateMeta(crashed), { verdict: 'incomplete', reason: /exited/ })
  await gate.waitForOutput(/not restarted/)
  const after = await gate.client.callTool({ name: 'echo', arguments: { text: 'x' } })
  t.match(gateMeta(after), { verdict: 'incomplete', reason: /exited/ }, 'the next call is decided, and fails as the server is gone')
  t.equal((await gate.client.listTools()).tools.length, 9, 'the last tool list stands')
  const r = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'crash'])
  const receipts = r.stdout.trim().split('\n').map(line => JSON.parse(line) as CoreReceipt)
  t.match(receipts, [{ decision: { verdict: 'allow' } }, { id: gateMeta(crashed).receipt_id, decision: { verdict: 'incomplete' }, metadata: { gate_decision_receipt_id: receipts[0]?.id } }])
})

t.test('a call the agent cancels gets a cancelled final receipt naming its decision', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcp(t, ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--allow-tool', 'hang', ...FIXTURE])
  const controller = new AbortController()
  const pending = gate.client.callTool({ name: 'hang', arguments: {} }, undefined, { signal: controller.signal })
  const list = async () => {
    const r = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'hang'])
    return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
  }
  // the decision is committed before the call reaches the server: cancel once it is in the store
  while ((await list()).length === 0) {}
  controller.abort()
  await t.rejects(pending)
  let receipts = await list()
  while (receipts.length < 2) receipts = await list()
  t.match(receipts, [{ decision: { verdict: 'allow' } }, { decision: { verdict: 'cancelled', reason: 'the agent cancelled the call' }, metadata: { gate_decision_receipt_id: receipts[0]?.id } }])
})
