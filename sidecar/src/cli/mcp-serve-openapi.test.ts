// End to end: the real `gate mcp serve --spec --upstream` in front of a real node:http upstream
// (testing/upstream-app.ts), driven by the SDK's Client over stdio, receipts in a SQLite store under
// t.testdir() and read back with `gate receipt list --tool-name`.
import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createSigner, generateSecret, signCapability, type CapabilityToken, type CoreReceipt, type ToolGrant } from '@gate/sdk'
import { widenedDelegation } from '@gate/sdk/testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcp, type GateMcpSession } from '../testing/mcp-session.js'
import { runGate } from '../testing/spawn-gate.js'
import { startUpstreamApp, type EchoBody, type UpstreamApp } from '../testing/upstream-app.js'

const CONTROL_TOKEN = 'control-token-for-mcp-tests'
const now = () => Math.floor(Date.now() / 1000)

const TOOLS_SPEC = `openapi: 3.1.0
info: { title: Pets, version: 1.0.0 }
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - { name: limit, in: query, schema: { type: integer } }
      responses: { '200': { description: ok } }
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, properties: { name: { type: string } }, required: [name] }
      responses: { '201': { description: created } }
  /pets/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: string } }
    get:
      operationId: getPet
      responses: { '200': { description: ok } }
    delete:
      operationId: deletePet
      x-gate-sensitivity: restricted
      responses: { '204': { description: gone } }
  /notes:
    post:
      operationId: uploadNote
      requestBody:
        content:
          text/plain: {}
      responses: { '200': { description: ok } }
  /status/{code}:
    parameters:
      - { name: code, in: path, required: true, schema: { type: string } }
    get:
      operationId: statusOf
      responses: { '200': { description: ok } }
  /hang:
    get:
      operationId: hangForever
      responses: { '200': { description: ok } }
  /broken:
    get:
      operationId: brokenJson
      responses: { '200': { description: ok } }
`

interface Setup {
  gate: GateMcpSession
  upstream: UpstreamApp
  db: string
  authority: ReturnType<typeof createSigner>
}

async function setup(t: Test, extra: string[] = []): Promise<Setup> {
  const upstream = await startUpstreamApp({ documents: { '/broken': { status: 200, headers: { 'content-type': 'application/json' }, body: 'not json {' } } })
  t.teardown(() => upstream.close())
  const files = await gateFiles(t)
  const spec = join(files.dir, 'tools.yaml')
  writeFileSync(spec, TOOLS_SPEC)
  const args = ['--spec', spec, '--upstream', `${upstream.url}/`, '--server-id', 'pets', '--receipt-store', files.db, '--authority-seed-file', files.seed, ...extra]
  const gate = await startGateMcp(t, args, { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  return { gate, upstream, db: files.db, authority }
}

function mint(authority: Setup['authority'], grants: ToolGrant[], times: { issued_at?: number; expires_at?: number } = {}): string {
  const token: CapabilityToken = signCapability(
    { schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 4).join('')}`, subject: 'ab'.repeat(32), scope: { grants }, issued_at: times.issued_at ?? now() - 10, expires_at: times.expires_at ?? now() + 3600 },
    authority,
  )
  return Buffer.from(JSON.stringify(token)).toString('base64url')
}

async function call(gate: GateMcpSession, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return (await gate.client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })) as CallToolResult
}

const gateMeta = (result: CallToolResult) => (result._meta as { gate: Record<string, string> }).gate
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text

async function listed(db: string, tool: string): Promise<CoreReceipt[]> {
  const r = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', tool])
  if (r.code !== 0) throw new Error(`gate receipt list failed: ${r.stderr}`)
  return r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
}

t.test('tools/list shows one tool per operation with its spec 01 policy; bodies have a body property', async t => {
  const { gate } = await setup(t)
  const { tools } = await gate.client.listTools()
  t.same(tools.map(tool => tool.name), ['brokenJson', 'hangForever', 'uploadNote', 'listPets', 'createPet', 'getPet', 'deletePet', 'statusOf'], "in the document's path order")
  t.match(tools.find(tool => tool.name === 'listPets'), { _meta: { gate: { policy: 'SessionAllow', why: 'safe method GET' } } })
  t.match(tools.find(tool => tool.name === 'deletePet'), { _meta: { gate: { policy: 'DenyByDefault', approval_required: true } } })
  t.match(tools.find(tool => tool.name === 'uploadNote'), { inputSchema: { properties: { body: {} } } }, 'a body without a schema still gets a body property')
})

t.test('a SessionAllow operation runs without a token and answers what the upstream answers directly', async t => {
  const { gate, upstream, db } = await setup(t)
  const result = await call(gate, 'listPets', { limit: 2 })
  const direct = await request(`${upstream.url}/pets?limit=2`)
  t.equal(text(result), await direct.body.text())
  t.same(result.structuredContent, undefined, 'a JSON array is text only')
  t.equal(upstream.received.at(-2)?.url, '/pets?limit=2', 'the query parameter travelled in the query string')
  t.match(await listed(db, 'listPets'), [{ id: gateMeta(result).receipt_id, tool_server: 'pets', decision: { verdict: 'allow' } }])
})

t.test('a DenyByDefault operation needs a grant; path parameters are encoded, the body is JSON', async t => {
  const { gate, upstream, db, authority } = await setup(t)
  const denied = await call(gate, 'createPet', { body: { name: 'Rex' } })
  t.match(gateMeta(denied), { verdict: 'deny', reason_code: 'capability_required', required_scope: 'pets:createPet' })
  t.equal(upstream.received.length, 0, 'nothing reached the upstream')
  const token = mint(authority, [{ server_id: 'pets', tool_name: 'createPet' }, { server_id: 'pets', tool_name: 'GET /pets/{id}' }])
  const created = await call(gate, 'createPet', { body: { name: 'Rex' } }, { gateCapability: token })
  const echoed = created.structuredContent as unknown as EchoBody
  t.equal(Buffer.from(echoed.bodyBase64, 'base64').toString(), '{"name":"Rex"}')
  t.match(echoed.rawHeaders.join(' '), /content-type application\/json/i)
  const fetched = await call(gate, 'getPet', { id: '../admin x' }, { gateCapability: token })
  t.match(gateMeta(fetched), { verdict: 'allow' }, 'a grant may name the operation as METHOD path')
  t.equal((fetched.structuredContent as unknown as EchoBody).url, '/pets/..%2Fadmin%20x')
  t.same((await listed(db, 'createPet')).map(r => r.decision?.verdict), ['deny', 'allow'])
})

t.test('a body of a non-JSON media type travels as the string given', async t => {
  const { gate, authority } = await setup(t)
  const result = await call(gate, 'uploadNote', { body: 'plain text note' }, { gateCapability: mint(authority, [{ server_id: 'pets', tool_name: 'uploadNote' }]) })
  const echoed = result.structuredContent as unknown as EchoBody
  t.equal(Buffer.from(echoed.bodyBase64, 'base64').toString(), 'plain text note')
  t.match(echoed.rawHeaders.join(' '), /content-type text\/plain/i)
})

t.test('a non-2xx answer is an isError result of a completed call; bad arguments never reach the upstream', async t => {
  const { gate, upstream } = await setup(t)
  const result = await call(gate, 'statusOf', { code: '404' })
  t.equal(result.isError, true)
  t.same(JSON.parse(text(result)), { error: 'upstream says 404' })
  t.match(gateMeta(result), { verdict: 'allow' })
  const before = upstream.received.length
  t.match(gateMeta(await call(gate, 'listPets', { limit: 'many' })), { verdict: 'deny', reason_code: 'arguments_invalid' })
  t.equal(upstream.received.length, before)
})

t.test('expired, revoked and widened tokens are denied', async t => {
  const { gate, authority } = await setup(t)
  const grants = [{ server_id: 'pets', tool_name: '*' }]
  t.match(gateMeta(await call(gate, 'createPet', { body: { name: 'a' } }, { gateCapability: mint(authority, grants, { issued_at: now() - 100, expires_at: now() - 5 }) })), { reason_code: 'capability_expired' })
  const live = mint(authority, grants)
  t.match(gateMeta(await call(gate, 'createPet', { body: { name: 'a' } }, { gateCapability: live })), { verdict: 'allow' })
  const id = (JSON.parse(Buffer.from(live, 'base64url').toString()) as CapabilityToken).id
  const revoked = await request(`${gate.controlUrl}/v1/revocations`, { method: 'POST', headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ capabilityId: id }) })
  await revoked.body.dump()
  t.match(gateMeta(await call(gate, 'createPet', { body: { name: 'a' } }, { gateCapability: live })), { reason_code: 'capability_revoked' })
  const widened = widenedDelegation({ authority, delegatee: createSigner({ secret: generateSecret() }), subject: 'ab'.repeat(32), now: now(), delegatedTool: 'listPets' })
  t.match(gateMeta(await call(gate, 'createPet', { body: { name: 'a' } }, { gateCapability: Buffer.from(JSON.stringify(widened)).toString('base64url') })), { verdict: 'deny', reason_code: /^capability_/ })
})

t.test('a restricted operation waits for approval, then runs once for the approved arguments', async t => {
  const { gate, upstream, db, authority } = await setup(t)
  const token = mint(authority, [{ server_id: 'pets', tool_name: 'deletePet' }])
  const pending = gateMeta(await call(gate, 'deletePet', { id: '7' }, { gateCapability: token }))
  t.match(pending, { reason_code: 'approval_required', approval_id: /\S/ })
  const r = await request(`${gate.controlUrl}${pending.resume_path}`, { method: 'POST', headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' }, body: '{"decision":"approve"}' })
  t.equal(r.statusCode, 200)
  await r.body.dump()
  t.match(gateMeta(await call(gate, 'deletePet', { id: '8' }, { gateCapability: token, gateApprovalId: pending.approval_id })), { reason_code: 'approval_invalid' })
  t.match(gateMeta(await call(gate, 'deletePet', { id: '7' }, { gateCapability: token, gateApprovalId: pending.approval_id })), { verdict: 'allow' })
  t.match(upstream.received.filter(req => req.method === 'DELETE'), [{ url: '/pets/7' }])
  t.same((await listed(db, 'deletePet')).map(rec => rec.decision?.verdict), ['deny', 'deny', 'allow'])
})

t.test('an upstream that hangs or answers broken JSON: isError with an incomplete receipt, and Gate keeps serving', async t => {
  const { gate, db } = await setup(t, ['--tool-timeout-secs', '1'])
  const hung = await call(gate, 'hangForever', {})
  t.equal(hung.isError, true)
  t.match(gateMeta(hung), { verdict: 'incomplete', reason: /did not answer/ })
  const broken = await call(gate, 'brokenJson', {})
  t.match(gateMeta(broken), { verdict: 'incomplete', reason: /not the JSON/ })
  t.match(await listed(db, 'brokenJson'), [{ decision: { verdict: 'allow' } }, { id: gateMeta(broken).receipt_id, decision: { verdict: 'incomplete' } }])
  t.match(gateMeta(await call(gate, 'listPets', {})), { verdict: 'allow' }, 'still serving')
})
