// End to end: the whole MCP session through the real `gate mcp serve` (stdio) and `gate mcp serve-http`
// (Streamable HTTP). The SDK's Client declares sampling, elicitation and roots and calls the fixture's
// `consult` tool, which logs, samples, elicits and lists roots during the call: every request reaches
// the client of the session that made the call, the answers go back to the server, the logs arrive
// before the result, and each relayed request is a child receipt (spec 03) linked to the call's
// request id and decision receipt, listed by GET /v1/receipts/children. A client that declares no
// sampling is not told of it: the server does not list the tool.
import t, { type Test } from 'tap'
import { canonicalJson, sha256Hex, type CoreReceipt } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { gateFiles } from '../testing/gate-files.js'
import { rawRequest, rawSession, startGateMcpHttp } from '../testing/mcp-http-session.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { runGate } from '../testing/spawn-gate.js'

const CONTROL_TOKEN = 'control-token-for-mcp-relay-tests'
const CAPABILITIES = { sampling: {}, elicitation: {}, roots: { listChanged: true } }
const SAMPLED = { role: 'assistant' as const, content: { type: 'text' as const, text: 'from the agent' }, model: 'test-model' }
const ELICITED = { action: 'accept' as const, content: { agree: true } }

interface ChildReceipt {
  id: string
  session_id: string
  parent_request_id: string
  request_id: string
  operation_kind: string
  terminal_state: string
  outcome_hash: string
  policy_hash: string
  metadata: Record<string, unknown>
}

/** Answers sampling, elicitation and roots as an agent and its user would; collects the logs. */
function answerAsAgent(client: Client, sampled = SAMPLED): string[] {
  const logs: string[] = []
  client.setRequestHandler(CreateMessageRequestSchema, () => sampled)
  client.setRequestHandler(ElicitRequestSchema, () => ELICITED)
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, n => void logs.push(String(n.params.data)))
  return logs
}

async function decisionOf(db: string, tool: string): Promise<CoreReceipt[]> {
  const r = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', tool])
  return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
}

async function childrenOf(controlUrl: string, parentRequestId: string): Promise<ChildReceipt[]> {
  const response = await fetch(`${controlUrl}/v1/receipts/children?parentRequestId=${encodeURIComponent(parentRequestId)}`, { headers: { authorization: `Bearer ${CONTROL_TOKEN}` } })
  if (response.status !== 200) throw new Error(`children listing answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { receipts: ChildReceipt[] }).receipts
}

/** The call's answer, its logs and its linked child receipts, checked the same way for both edges. */
async function checkConsult(t: Test, client: Client, logs: string[], db: string, controlUrl: string, sessionPrefix: string): Promise<void> {
  const result = (await client.callTool({ name: 'consult', arguments: { question: 'ship it?' } })) as CallToolResult
  t.same(result.content, [{ type: 'text', text: 'sampled: from the agent; answer: accept {"agree":true}; roots: file:///work' }], 'the server got the agent\'s answers')
  t.same(logs, ['consulting on ship it?', 'consulted'], 'the logs of the call arrived before its result')
  const [decision] = await decisionOf(db, 'consult')
  const requestId = decision!.metadata!.gate_request_id as string
  t.match(decision, { decision: { verdict: 'allow' }, metadata: { gate_session_id: new RegExp(`^${sessionPrefix}`) } })
  const children = await childrenOf(controlUrl, requestId)
  t.same(children.map(c => c.operation_kind), ['sampling/createMessage', 'elicitation/create', 'roots/list'], 'each relayed request is recorded, in order')
  for (const child of children) {
    t.match(child, {
      session_id: decision!.metadata!.gate_session_id,
      parent_request_id: requestId,
      terminal_state: 'completed',
      policy_hash: decision!.policy_hash,
      metadata: { gate_parent_receipt_id: decision!.id, gate_tool_name: 'consult', gate_tool_server: 'fs' },
    })
    const { id, ...body } = child
    t.equal(id, sha256Hex(canonicalJson(body)), `${child.operation_kind}: the id is content-addressed`)
  }
  t.equal(children[0]!.outcome_hash, sha256Hex(canonicalJson(SAMPLED)), 'the sampling answer is recorded by its hash')
  t.equal(children[1]!.outcome_hash, sha256Hex(canonicalJson(ELICITED)), 'the elicitation answer is recorded by its hash')
}

t.test('gate mcp serve: sampling, elicitation, roots and logs of a call reach the agent, recorded against the call', async t => {
  const files = await gateFiles(t)
  const args = ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'consult', '--', process.execPath, FIXTURE_SERVER_PATH]
  const gate = await startGateMcp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN }, capabilities: { capabilities: CAPABILITIES } })
  const logs = answerAsAgent(gate.client)
  t.ok((await gate.client.listTools()).tools.some(tool => tool.name === 'consult'), 'the server was told the agent samples')
  await checkConsult(t, gate.client, logs, files.db, gate.controlUrl, 'mcp_')
})

t.test('gate mcp serve: an agent that declares no sampling is not announced as one', async t => {
  const gate = await startGateMcp(t, ['--allow-ephemeral-receipts', '--', process.execPath, FIXTURE_SERVER_PATH])
  t.notOk((await gate.client.listTools()).tools.some(tool => tool.name === 'consult'), 'the server lists what it lists to a client without sampling')
})

t.test('gate mcp serve-http: each session relays its own calls\' requests and logs, recorded against the call', async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'consult', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  const { client } = await gate.connect({ capabilities: CAPABILITIES })
  const logs = answerAsAgent(client)
  await checkConsult(t, client, logs, files.db, gate.controlUrl, 'mcp_')

  // two sessions calling at once: each server request reaches the client whose call caused it
  const [a, b] = await Promise.all([gate.connect({ capabilities: CAPABILITIES }), gate.connect({ capabilities: CAPABILITIES })])
  answerAsAgent(a.client, { ...SAMPLED, content: { type: 'text', text: 'agent A' } })
  answerAsAgent(b.client, { ...SAMPLED, content: { type: 'text', text: 'agent B' } })
  const [fromA, fromB] = await Promise.all([a.client.callTool({ name: 'consult', arguments: { question: 'a' } }), b.client.callTool({ name: 'consult', arguments: { question: 'b' } })])
  t.match((fromA as CallToolResult).content, [{ text: /^sampled: agent A;/ }], 'session A got its own answer')
  t.match((fromB as CallToolResult).content, [{ text: /^sampled: agent B;/ }], 'session B got its own answer')

  const plain = await gate.connect()
  t.notOk((await plain.client.listTools()).tools.some(tool => tool.name === 'consult'), 'a session without sampling: the server was not told of any')
})

t.test('gate mcp serve-http: a session\'s server process ends with the session; --shared-server keeps one for all', async t => {
  const admin = 'admin-token-for-mcp-relay-tests'
  const health = async (base: string) => (await rawRequest(`${base}/admin/health`, 'GET', { authorization: `Bearer ${admin}` })).json() as unknown as { sessions: number; wrappedConnections: number }
  const own = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], { env: { GATE_ADMIN_TOKEN: admin } })
  const ids = await Promise.all([1, 2, 3].map(() => rawSession(own.url)))
  t.match(await health(own.base), { sessions: 3, wrappedConnections: 3 }, 'one server process per session')
  for (const id of ids) t.equal((await rawRequest(own.url, 'DELETE', { 'mcp-session-id': id })).status, 200)
  t.match(await health(own.base), { sessions: 0, wrappedConnections: 0 }, 'each ended with its session')

  const shared = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--allow-tool', 'log', '--shared-server', '--', process.execPath, FIXTURE_SERVER_PATH], { env: { GATE_ADMIN_TOKEN: admin } })
  const { client } = await shared.connect({ capabilities: CAPABILITIES })
  const logs = answerAsAgent(client)
  await shared.connect()
  t.match(await health(shared.base), { sessions: 2, wrappedConnections: 1 }, 'one process for every session')
  t.match(await client.callTool({ name: 'log', arguments: { message: 'mine' } }), { content: [{ text: 'logged' }] })
  t.same(logs, ['mine'], 'a log line during the call reaches the one session with a call in flight')
  t.notOk((await client.listTools()).tools.some(tool => tool.name === 'consult'), 'the shared server is told no client capabilities')
})
