// End to end: the real `gate mcp serve-http` wrapping the fixture MCP server (@gate/mcp/testing), driven
// by the SDK's Client over StreamableHTTPClientTransport as a remote agent, receipts in a SQLite store
// under t.testdir() and read back with the real `gate receipt list`: the allow, deny, approval and
// revocation cases of `gate mcp serve`, the capability as X-Gate-Capability, model metadata, admission
// and the admin routes.
import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createSigner, generateSecret, signCapability, verifyCoreReceipt, type CapabilityToken, type CoreReceipt, type ToolGrant } from '@gate/sdk'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { initializeMessage, rawPost, rawRequest, rawSession, startGateMcpHttp, type GateMcpHttp } from '../testing/mcp-http-session.js'
import { runGate } from '../testing/spawn-gate.js'

const CONTROL_TOKEN = 'control-token-for-mcp-http-tests'
const ADMIN_TOKEN = 'admin-token-for-mcp-http-tests'
const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const now = () => Math.floor(Date.now() / 1000)

interface Setup {
  gate: GateMcpHttp
  db: string
  dir: string
  authority: ReturnType<typeof createSigner>
}

async function setup(t: Test, extra: string[] = [], env: Record<string, string> = {}): Promise<Setup> {
  const files = await gateFiles(t)
  const args = ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', ...extra, ...FIXTURE]
  const gate = await startGateMcpHttp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN, ...env } })
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  return { gate, db: files.db, dir: files.dir, authority }
}

function mint(authority: Setup['authority'], grants: ToolGrant[], times: { issued_at?: number; expires_at?: number } = {}): CapabilityToken {
  return signCapability(
    { schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 4).join('')}`, subject: 'ab'.repeat(32), scope: { grants }, issued_at: times.issued_at ?? now() - 10, expires_at: times.expires_at ?? now() + 3600 },
    authority,
  )
}

const encode = (token: CapabilityToken) => Buffer.from(JSON.stringify(token)).toString('base64url')
const gateMeta = (result: CallToolResult) => (result._meta as { gate: Record<string, string> }).gate

async function listed(db: string, tool: string): Promise<CoreReceipt[]> {
  const r = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', tool])
  if (r.code !== 0) throw new Error(`gate receipt list failed: ${r.stderr}`)
  return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
}

async function control(url: string, path: string, body: unknown): Promise<number> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await res.arrayBuffer()
  return res.status
}

t.test('an allowed call answers what the wrapped server answers, a denied one names its receipt; both are listed', async t => {
  const { gate, db, authority } = await setup(t, ['--allow-tool', 'echo'])
  t.match(gate.proc.output(), /admission: open \(loopback listener/, 'the start-up line says sessions are admitted without credentials')
  const { client } = await gate.connect()
  t.match(client.getServerCapabilities(), { tools: {}, experimental: { gateProtocol: { selectedProtocolVersion: '2025-11-25' } } })
  t.same((await client.listTools()).tools.map(tool => tool.name), ['echo', 'write_note', 'progress', 'release', 'log', 'ask', 'crash', 'garbage', 'hang'])
  const echoed = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) as CallToolResult
  t.same(echoed.content, [{ type: 'text', text: 'echo: hello' }])
  const denied = (await client.callTool({ name: 'write_note', arguments: { path: '/a', content: 'x' } })) as CallToolResult
  t.match(gateMeta(denied), { verdict: 'deny', reason_code: 'capability_required' })
  const token = mint(authority, [{ server_id: 'fs', tool_name: 'write_note' }])
  const granted = (await client.callTool({ name: 'write_note', arguments: { path: '/a', content: 'x' }, _meta: { gateCapability: encode(token) } })) as CallToolResult
  t.match(granted, { structuredContent: { path: '/a', bytes: 1 }, _meta: { gate: { verdict: 'allow' } } })
  const receipts = await listed(db, 'write_note')
  t.same(receipts.map(r => r.id), [gateMeta(denied).receipt_id, gateMeta(granted).receipt_id])
  t.ok(verifyCoreReceipt(receipts[1]!, { trustedKeys: [authority.publicKey] }).ok)
  t.match(receipts[1], { capability_id: token.id, tool_server: 'fs', decision: { verdict: 'allow' } })
})

t.test('X-Gate-Capability on the session grants its calls; _meta.gateCapability wins over it', async t => {
  const { gate, authority } = await setup(t)
  const session = mint(authority, [{ server_id: 'fs', tool_name: 'echo' }])
  const { client } = await gate.connect({ headers: { 'x-gate-capability': encode(session) } })
  t.match(gateMeta((await client.callTool({ name: 'echo', arguments: { text: 'a' } })) as CallToolResult), { verdict: 'allow' })
  const narrower = mint(authority, [{ server_id: 'fs', tool_name: 'write_note' }])
  const perCall = (await client.callTool({ name: 'echo', arguments: { text: 'a' }, _meta: { gateCapability: encode(narrower) } })) as CallToolResult
  t.match(gateMeta(perCall), { verdict: 'deny', reason_code: 'scope_mismatch' })
  const { client: bare } = await gate.connect()
  t.match(gateMeta((await bare.callTool({ name: 'echo', arguments: { text: 'a' } })) as CallToolResult), { verdict: 'deny', reason_code: 'capability_required' }, "another session does not get this session's header")
  // sent with initialize only, the header is the session's capability for its later calls
  const id = await rawSessionWith(gate.url, { 'x-gate-capability': encode(session) })
  const later = await rawPost(gate.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } }, { 'mcp-session-id': id })
  t.match(later.text, /"verdict":"allow"/)
})

async function rawSessionWith(url: string, initializeHeaders: Record<string, string>): Promise<string> {
  const init = await rawPost(url, initializeMessage(), initializeHeaders)
  const id = init.headers.get('mcp-session-id')!
  await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id })
  return id
}

t.test('model metadata under _meta.modelMetadata or _meta.gateModelMetadata is recorded as asserted', async t => {
  const { gate, db } = await setup(t, ['--allow-tool', 'echo'])
  const { client } = await gate.connect()
  await client.callTool({ name: 'echo', arguments: { text: '1' }, _meta: { modelMetadata: { name: 'model-a' } } })
  await client.callTool({ name: 'echo', arguments: { text: '2' }, _meta: { gateModelMetadata: { name: 'model-b' } } })
  const receipts = await listed(db, 'echo')
  t.equal(receipts.length, 2)
  t.match(JSON.stringify(receipts[0]), /model-a/)
  t.match(JSON.stringify(receipts[1]), /model-b/)
})

t.test('expired and revoked tokens are denied; a revocation reaches the live session', async t => {
  const { gate, authority } = await setup(t)
  const { client } = await gate.connect()
  const call = async (token: CapabilityToken) => gateMeta((await client.callTool({ name: 'echo', arguments: { text: 'a' }, _meta: { gateCapability: encode(token) } })) as CallToolResult)
  t.match(await call(mint(authority, [{ server_id: 'fs', tool_name: '*' }], { issued_at: now() - 100, expires_at: now() - 10 })), { verdict: 'deny', reason_code: 'capability_expired' })
  const live = mint(authority, [{ server_id: 'fs', tool_name: '*' }])
  t.match(await call(live), { verdict: 'allow' })
  t.equal(await control(gate.controlUrl, '/v1/revocations', { capabilityId: live.id }), 200)
  t.match(await call(live), { verdict: 'deny', reason_code: 'capability_revoked' })
})

t.test('a tool needing approval: pending, approved by the control routes, allowed once', async t => {
  const { gate, db } = await setup(t, ['--allow-tool', 'write_note', '--approval-tool', 'write_note'])
  const { client } = await gate.connect()
  const args = { path: '/notes/b', content: 'approved' }
  const pending = gateMeta((await client.callTool({ name: 'write_note', arguments: args })) as CallToolResult)
  t.match(pending, { verdict: 'deny', reason_code: 'approval_required', approval_id: /\S/ })
  t.equal(await control(gate.controlUrl, pending.resume_path!, { decision: 'approve' }), 200)
  const allowed = (await client.callTool({ name: 'write_note', arguments: args, _meta: { gateApprovalId: pending.approval_id } })) as CallToolResult
  t.match(allowed, { content: [{ text: 'wrote 8 bytes to /notes/b' }], _meta: { gate: { verdict: 'allow' } } })
  t.match(gateMeta((await client.callTool({ name: 'write_note', arguments: args, _meta: { gateApprovalId: pending.approval_id } })) as CallToolResult), { reason_code: 'approval_invalid' })
  t.same((await listed(db, 'write_note')).map(r => r.decision?.verdict), ['deny', 'allow', 'deny'])
})

t.test('admission by bearer token or JWT: others get 401, identical for absent and unknown tokens', async t => {
  const files = await gateFiles(t)
  const tokens = join(files.dir, 'tokens')
  writeFileSync(tokens, '# agents\nagent-token-0123456789\n')
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const keyFile = join(files.dir, 'jwt.pem')
  writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }))
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--admission-token-file', tokens, '--jwt-key', keyFile, '--jwt-issuer', 'https://idp.test', ...FIXTURE])
  t.match(gate.proc.output(), /admission: required \(1 bearer token\(s\) or JWT\)/)
  const absent = await rawPost(gate.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
  const unknown = await rawPost(gate.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { authorization: 'Bearer not-a-listed-token-at-all' })
  for (const refused of [absent, unknown]) {
    t.equal(refused.status, 401)
    t.equal(refused.headers.get('www-authenticate'), 'Bearer')
  }
  t.same(absent.json(), unknown.json())
  const { client } = await gate.connect({ headers: { authorization: 'Bearer agent-token-0123456789' } })
  t.ok((await client.listTools()).tools.length > 0, 'a listed bearer token admits')
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setSubject('agent-7').setIssuer('https://idp.test').setExpirationTime('5m').sign(privateKey)
  const { client: viaJwt } = await gate.connect({ headers: { authorization: `Bearer ${jwt}` } })
  t.ok((await viaJwt.listTools()).tools.length > 0, 'a JWT from the configured issuer admits')
  const wrongIssuer = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setSubject('agent-7').setIssuer('https://other.test').setExpirationTime('5m').sign(privateKey)
  t.equal((await rawPost(gate.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { authorization: `Bearer ${wrongIssuer}` })).status, 401)
})

t.test('a non-loopback listener without admission is refused at start (exit 2)', async t => {
  const files = await gateFiles(t)
  const r = await runGate(['mcp', 'serve-http', '--listen', '0.0.0.0:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-plaintext-remote', ...FIXTURE])
  t.equal(r.code, 2)
  t.match(r.stderr, /needs admission/)
})

t.test('the admin routes: health, sessions and ending one, behind --admin-token', async t => {
  const { gate } = await setup(t, ['--allow-tool', 'echo'], { GATE_ADMIN_TOKEN: ADMIN_TOKEN })
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  t.equal((await rawRequest(`${gate.base}/admin/health`, 'GET')).status, 401)
  t.equal((await rawRequest(`${gate.base}/admin/health`, 'GET', { authorization: 'Bearer wrong-token-0123456789' })).status, 401)
  const id = await rawSession(gate.url)
  const health = (await rawRequest(`${gate.base}/admin/health`, 'GET', admin)).json() as unknown as Record<string, unknown>
  t.match(health, { status: 'ok', sessions: 1, draining: false, serverId: 'fs', toolServer: 'mcp' })
  const sessions = (await rawRequest(`${gate.base}/admin/sessions`, 'GET', admin)).json() as unknown as { sessions: Record<string, unknown>[] }
  t.match(sessions.sessions, [{ id, state: 'ready', live: true, protocolVersion: '2025-11-25' }])
  t.notOk('principal' in sessions.sessions[0]!, 'who was admitted is not shown')
  t.equal((await rawRequest(`${gate.base}/admin/sessions/${id}`, 'DELETE', admin)).status, 200)
  t.match((await rawRequest(`${gate.base}/admin/sessions/${id}`, 'GET', admin)).json(), { id, state: 'closed', live: false })
  const after = await rawPost(gate.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id })
  t.equal(after.status, 404)
  t.match(after.json(), { error: 'gate_session_terminated', message: /Session closed: initialize a new session/ })
})

t.test('without --admin-token the admin routes are not there', async t => {
  const { gate } = await setup(t)
  t.equal((await rawRequest(`${gate.base}/admin/health`, 'GET', { authorization: `Bearer ${ADMIN_TOKEN}` })).status, 404)
})
