// End to end: the real `gate mcp serve` wrapping the fixture MCP server (@gate/mcp/testing, a child over
// stdio), driven by the SDK's Client over StdioClientTransport, receipts in a SQLite store under
// t.testdir(). Every decision's receipt is then found by the real `gate receipt list --tool-name`.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { request } from 'undici'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createSigner, generateSecret, signCapability, verifyCoreReceipt, type CapabilityToken, type CoreReceipt, type ToolGrant } from '@gate/sdk'
import { widenedDelegation } from '@gate/sdk/testing'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcp, type GateMcpSession } from '../testing/mcp-session.js'
import { runGate } from '../testing/spawn-gate.js'

const CONTROL_TOKEN = 'control-token-for-mcp-tests'
const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const now = () => Math.floor(Date.now() / 1000)

interface Setup {
  gate: GateMcpSession
  db: string
  authority: ReturnType<typeof createSigner>
}

async function setup(t: Test, extra: string[] = [], env: Record<string, string> = {}): Promise<Setup> {
  const files = await gateFiles(t)
  const args = ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', ...extra, ...FIXTURE]
  const gate = await startGateMcp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN, ...env } })
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  return { gate, db: files.db, authority }
}

function mint(authority: Setup['authority'], grants: ToolGrant[], times: { issued_at?: number; expires_at?: number } = {}): CapabilityToken {
  return signCapability(
    { schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 4).join('')}`, subject: 'ab'.repeat(32), scope: { grants }, issued_at: times.issued_at ?? now() - 10, expires_at: times.expires_at ?? now() + 3600 },
    authority,
  )
}

const encode = (token: CapabilityToken) => Buffer.from(JSON.stringify(token)).toString('base64url')

async function call(gate: GateMcpSession, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return (await gate.client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })) as CallToolResult
}

const gateMeta = (result: CallToolResult) => (result._meta as { gate: Record<string, string> }).gate

/** The receipts `gate receipt list --tool-name NAME` prints. */
async function listed(db: string, tool: string): Promise<CoreReceipt[]> {
  const r = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', tool])
  if (r.code !== 0) throw new Error(`gate receipt list failed: ${r.stderr}`)
  return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
}

async function directCall(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const client = new Client({ name: 'direct', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE_SERVER_PATH] }))
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult
  } finally {
    await client.close()
  }
}

t.test('initialize and tools/list: the wrapped server, every tool listed with its Gate policy', async t => {
  const { gate } = await setup(t, ['--allow-tool', 'echo'])
  t.match(gate.client.getServerVersion(), { name: 'gate' })
  t.equal(gate.client.getInstructions(), 'fixture instructions', 'the wrapped server instructions pass through')
  const { tools } = await gate.client.listTools()
  t.same(tools.map(tool => tool.name), ['echo', 'write_note', 'progress', 'release', 'log', 'ask', 'crash', 'garbage', 'hang'])
  t.match(tools[0], { name: 'echo', inputSchema: { required: ['text'] }, _meta: { gate: { policy: 'SessionAllow', why: '--allow-tool echo' } } })
  t.match(tools[1], { _meta: { gate: { policy: 'DenyByDefault', approval_required: false } } })
})

t.test('an allowed call answers what the server answers directly, with an allow receipt listed by tool name', async t => {
  const { gate, db, authority } = await setup(t, ['--allow-tool', 'echo'])
  const viaGate = await call(gate, 'echo', { text: 'hello' })
  t.same(viaGate.content, (await directCall('echo', { text: 'hello' })).content)
  t.notOk(viaGate.isError)
  const token = mint(authority, [{ server_id: 'fs', tool_name: 'write_note' }])
  const granted = await call(gate, 'write_note', { path: '/notes/a', content: 'abc' }, { gateCapability: encode(token) })
  const direct = await directCall('write_note', { path: '/notes/a', content: 'abc' })
  t.same({ content: granted.content, structuredContent: granted.structuredContent }, { content: direct.content, structuredContent: direct.structuredContent })
  const [receipt] = await listed(db, 'write_note')
  t.match(receipt, { id: gateMeta(granted).receipt_id, tool_server: 'fs', tool_name: 'write_note', capability_id: token.id, decision: { verdict: 'allow' } })
  t.ok(verifyCoreReceipt(receipt!, { trustedKeys: [authority.publicKey] }).ok, 'the listed receipt verifies')
  t.match(await listed(db, 'echo'), [{ id: gateMeta(viaGate).receipt_id, decision: { verdict: 'allow' } }])
})

t.test('a denied tool answers isError with the reason code and the receipt id; the server never sees it', async t => {
  const { gate, db } = await setup(t)
  const denied = await call(gate, 'write_note', { path: '/x', content: 'y' })
  t.equal(denied.isError, true)
  t.match(gateMeta(denied), { verdict: 'deny', reason_code: 'capability_required', required_scope: 'fs:write_note', hint: /_meta.gateCapability/ })
  t.match((denied.content[0] as { text: string }).text, new RegExp(`capability_required[\\s\\S]*receipt: ${gateMeta(denied).receipt_id}`))
  t.match(await listed(db, 'write_note'), [{ id: gateMeta(denied).receipt_id, decision: { verdict: 'deny' } }])
})

t.test('a tool called by name without being listed is decided the same way, and an unknown one is denied', async t => {
  const { gate, db, authority } = await setup(t)
  const all = encode(mint(authority, [{ server_id: 'fs', tool_name: '*' }]))
  const unknown = await call(gate, 'delete_everything', {}, { gateCapability: all })
  t.match(gateMeta(unknown), { verdict: 'deny', reason_code: 'tool_unknown' })
  const invalid = await call(gate, 'echo', { text: 42 }, { gateCapability: all })
  t.match(gateMeta(invalid), { verdict: 'deny', reason_code: 'arguments_invalid' })
  t.match(await listed(db, 'delete_everything'), [{ id: gateMeta(unknown).receipt_id }])
})

t.test('the session capability grants; a per-call token wins over it', async t => {
  const files = await gateFiles(t)
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  const session = mint(authority, [{ server_id: 'fs', tool_name: 'echo' }])
  const gate = await startGateMcp(t, ['--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--server-id', 'fs', ...FIXTURE], { env: { GATE_CAPABILITY: encode(session) } })
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' })), { verdict: 'allow' })
  const narrower = mint(authority, [{ server_id: 'fs', tool_name: 'write_note' }])
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' }, { gateCapability: encode(narrower) })), { verdict: 'deny', reason_code: 'scope_mismatch' })
})

t.test('expired, revoked and widened tokens are denied; a revocation reaches the live session', async t => {
  const { gate, db, authority } = await setup(t)
  const expired = mint(authority, [{ server_id: 'fs', tool_name: '*' }], { issued_at: now() - 100, expires_at: now() - 10 })
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' }, { gateCapability: encode(expired) })), { verdict: 'deny', reason_code: 'capability_expired' })
  const live = mint(authority, [{ server_id: 'fs', tool_name: '*' }])
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' }, { gateCapability: encode(live) })), { verdict: 'allow' })
  const revoked = await request(`${gate.controlUrl}/v1/revocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ capabilityId: live.id }),
  })
  t.equal(revoked.statusCode, 200)
  await revoked.body.dump()
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' }, { gateCapability: encode(live) })), { verdict: 'deny', reason_code: 'capability_revoked' })
  const widened = widenedDelegation({ authority, delegatee: createSigner({ secret: generateSecret() }), subject: 'ab'.repeat(32), now: now(), delegatedTool: 'echo' })
  t.match(gateMeta(await call(gate, 'echo', { text: 'a' }, { gateCapability: encode(widened) })), { verdict: 'deny', reason_code: /^capability_/ })
  t.equal((await listed(db, 'echo')).filter(r => r.decision?.verdict === 'deny').length, 3)
})

t.test('a tool needing approval: pending, approved, allowed once for the same arguments only', async t => {
  const { gate, db } = await setup(t, ['--allow-tool', 'write_note', '--approval-tool', 'write_note'])
  const args = { path: '/notes/b', content: 'approved' }
  const pending = await call(gate, 'write_note', args)
  const meta = gateMeta(pending)
  t.match(meta, { verdict: 'deny', reason_code: 'approval_required', approval_id: /\S/, resume_path: `/approvals/${meta.approval_id}/respond` })
  const answered = await request(`${gate.controlUrl}${meta.resume_path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: '{"decision":"approve"}',
  })
  t.equal(answered.statusCode, 200)
  await answered.body.dump()
  const other = await call(gate, 'write_note', { ...args, content: 'something else' }, { gateApprovalId: meta.approval_id })
  t.match(gateMeta(other), { verdict: 'deny', reason_code: 'approval_invalid' }, 'approving one argument set never approves another')
  const allowed = await call(gate, 'write_note', args, { gateApprovalId: meta.approval_id })
  t.match(allowed, { content: [{ type: 'text', text: 'wrote 8 bytes to /notes/b' }], _meta: { gate: { verdict: 'allow' } } })
  t.match(gateMeta(await call(gate, 'write_note', args, { gateApprovalId: meta.approval_id })), { verdict: 'deny', reason_code: 'approval_invalid' }, 'allowed once')
  const verdicts = (await listed(db, 'write_note')).map(r => r.decision?.verdict)
  t.same(verdicts, ['deny', 'deny', 'allow', 'deny'])
})

t.test('resources, prompts, logging and progress of the wrapped server pass through', async t => {
  const { gate } = await setup(t, ['--allow-tool', 'log', '--allow-tool', 'progress', '--allow-tool', 'release'])
  t.same(await gate.client.readResource({ uri: 'fixture://readme' }), { contents: [{ uri: 'fixture://readme', mimeType: 'text/plain', text: 'contents of fixture://readme' }] })
  t.match((await gate.client.listPrompts()).prompts, [{ name: 'greet' }])
  t.match(await gate.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } }), { messages: [{ content: { text: 'Say hello to Ada' } }] })
  const logged = new Promise<unknown>(resolve => gate.client.setNotificationHandler(LoggingMessageNotificationSchema, n => resolve(n.params)))
  await call(gate, 'log', { message: 'hi there' })
  t.match(await logged, { level: 'info', data: 'hi there' })
  const progress: number[] = []
  let seenBoth!: () => void
  const both = new Promise<void>(resolve => (seenBoth = resolve))
  const result = gate.client.callTool({ name: 'progress', arguments: {} }, undefined, {
    onprogress: p => {
      progress.push(p.progress)
      if (progress.length === 2) seenBoth()
    },
  })
  await both
  t.same(progress, [1, 2], "relayed in order under the agent's token")
  await call(gate, 'release', {})
  t.match(await result, { content: [{ text: 'done' }] })
})

t.test("the wrapped server's sampling requests reach an agent that supports sampling, and only such an agent", async t => {
  const files = await gateFiles(t)
  const args = ['--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-tool', 'ask', ...FIXTURE]
  const sampling = await startGateMcp(t, args, { capabilities: { capabilities: { sampling: {} } } })
  sampling.client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'from the agent' }, model: 'test-model' }))
  t.match(await call(sampling, 'ask', {}), { content: [{ text: 'sampled: from the agent' }] })
  const plain = await startGateMcp(t, args)
  t.match(await call(plain, 'ask', {}), { isError: true, content: [{ text: /sampling failed: .*does not support sampling\/createMessage/ }] })
})
