// The agent's side of `gate mcp serve`: the MCP SDK's Client starts Gate over stdio, as an MCP host
// (a desktop app, an IDE) does from its server configuration, and calls tools through it. Gate logs
// to stderr; this script reads its control URL there to play the operator too (issue a capability,
// approve a call, revoke the capability) through Gate's control routes.
//
//   node examples/mcp/agent.mjs filesystem DIR   wraps @modelcontextprotocol/server-filesystem on DIR
//   node examples/mcp/agent.mjs pets URL         the pets API at URL (examples/protect/openapi.yaml)
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const [mode, target] = process.argv.slice(2)
if (!['filesystem', 'pets'].includes(mode) || target === undefined) {
  console.error('usage: node examples/mcp/agent.mjs filesystem DIR | pets URL')
  process.exit(2)
}
const controlToken = process.env.GATE_CONTROL_TOKEN
const store = ['--receipt-store', `.gate/mcp-${mode}/receipts.db`, '--authority-seed-file', '.gate/mcp.seed']
const behind =
  mode === 'filesystem'
    ? ['--server-id', 'fs', '--allow-tool', 'list_allowed_directories', '--allow-tool', 'read_text_file', '--approval-tool', 'write_file', '--', 'npx', 'mcp-server-filesystem', target]
    : ['--server-id', 'pets', '--spec', 'examples/protect/openapi.yaml', '--upstream', target]
const transport = new StdioClientTransport({ command: 'npx', args: ['gate', 'mcp', 'serve', ...store, ...behind], env: { ...process.env }, stderr: 'pipe' })
let gateLog = ''
const controlUrl = new Promise(resolve =>
  transport.stderr.on('data', chunk => {
    gateLog += chunk
    const m = /control routes \(approvals\) on (http:\/\/[^\s"]+)/.exec(gateLog)
    if (m !== null) resolve(m[1])
  }),
)
const client = new Client({ name: 'example-agent', version: '1.0.0' })
try {
  await client.connect(transport)
} catch (err) {
  console.error(`gate mcp serve did not start: ${err.message}\n${gateLog}`)
  process.exit(1)
}

async function callTool(name, args, meta) {
  const result = await client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })
  const gate = result._meta?.gate ?? {}
  const outcome = result.isError && gate.verdict !== 'allow' ? `denied ${gate.reason_code} (receipt ${gate.receipt_id})` : `${result.isError ? 'error' : 'ok'}: ${result.content[0]?.text ?? ''}`
  console.log(`${name}${meta?.gateCapability === undefined ? '' : ' with the capability'}${meta?.gateApprovalId === undefined ? '' : ' and the approval'}: ${outcome}`)
  return gate
}

async function control(method, path, body) {
  const res = await fetch(`${await controlUrl}${path}`, { method, headers: { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

async function issue(serverId, toolName) {
  const subjectPublicKey = readFileSync('.gate/mcp-agent.pub', 'utf8').trim()
  const { capability } = await control('POST', '/v1/capabilities/issue', { subjectPublicKey, scope: { grants: [{ server_id: serverId, tool_name: toolName }] }, ttlSeconds: 3600 })
  console.log(`issued ${capability.id} for ${serverId}:${toolName}`)
  return { id: capability.id, text: Buffer.from(JSON.stringify(capability)).toString('base64url') }
}

const { tools } = await client.listTools()
console.log(`tools: ${tools.map(t => `${t.name} (${t._meta.gate.policy})`).join(', ')}`)

const [openCall, guarded, guardedArgs] =
  mode === 'filesystem'
    ? [['read_text_file', { path: resolve(target, 'hello.txt') }], 'write_file', { path: resolve(target, 'note.txt'), content: 'written through Gate' }]
    : [['listPets', {}], 'adoptPet', { id: '1' }]
await callTool(...openCall)
await callTool(guarded, guardedArgs)
const token = await issue(mode === 'filesystem' ? 'fs' : 'pets', guarded)
const pending = await callTool(guarded, guardedArgs, { gateCapability: token.text })
if (pending.approval_id !== undefined) {
  await control('POST', pending.resume_path, { decision: 'approve', responder: 'example-operator' })
  console.log(`approved ${pending.approval_id}`)
  await callTool(guarded, guardedArgs, { gateCapability: token.text, gateApprovalId: pending.approval_id })
}
await control('POST', '/v1/revocations', { capabilityId: token.id })
console.log(`revoked ${token.id}`)
await callTool(guarded, guardedArgs, { gateCapability: token.text })
await client.close()
