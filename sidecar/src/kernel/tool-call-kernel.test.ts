// The tool-call path over in-memory ports: each decision is a verifying core receipt with the call's
// parameters and their hash; the token's grants and argument constraints decide; approvals bind to the
// exact call; unknown tools and bad arguments are denied with a receipt; a call that did not complete
// gets a final receipt. Guards see the agent session (spec 02 SessionContext) the edge filled.
import t from 'tap'
import { ANONYMOUS_CALLER, canonicalJson, sha256Hex, verifyCoreReceipt, type CoreReceipt } from '@gate/sdk'
import { delegatedChild, exampleSigner, widenedDelegation } from '@gate/sdk/testing'
import { EdgeSessionContext } from '@gate/mcp'
import { KERNEL_AGENT, KERNEL_AUTHORITY, KERNEL_NOW, kernelToken, setupKernel } from '../testing/kernel-setup.js'
import { encodeCapabilityToken } from './capability-token.js'
import { ToolCallKernel, type ToolCallInput, type ToolPolicy } from './tool-call-kernel.js'

const GRANTED: ToolPolicy = { decision: 'DenyByDefault', why: 'wrapped MCP server', approvalRequired: false }
const OPEN: ToolPolicy = { decision: 'SessionAllow', why: '--allow-tool list_files', approvalRequired: false }

function setup() {
  const { kernel, ports } = setupKernel({ routeTable: null })
  return { tools: new ToolCallKernel(kernel), ports }
}

const call = (extra: Partial<ToolCallInput> = {}): ToolCallInput => ({
  serverId: 'fs',
  tool: 'write_file',
  params: { path: '/tmp/a.txt', content: 'hello' },
  caller: ANONYMOUS_CALLER,
  policy: GRANTED,
  ...extra,
})

const verifies = (receipt: CoreReceipt) => verifyCoreReceipt(receipt, { trustedKeys: [KERNEL_AUTHORITY.publicKey] }).ok

t.test('a deny-by-default tool without a token is denied with a core receipt and spec 02 deny details', async t => {
  const { tools, ports } = setup()
  const decided = await tools.decide(call())
  t.match(decided.verdict, {
    verdict: 'deny',
    guard: 'CapabilityGuard',
    reason: 'capability required: tool fs:write_file is deny-by-default',
    details: { reason_code: 'capability_required', required_scope: 'fs:write_file', tool_server: 'fs', tool_name: 'write_file', receipt_id: decided.receipt.id, hint: /_meta.gateCapability/ },
  })
  t.ok(verifies(decided.receipt), 'the receipt verifies as gate.receipt.v1')
  t.match(decided.receipt, {
    tool_server: 'fs',
    tool_name: 'write_file',
    capability_id: '',
    action: { parameters: { path: '/tmp/a.txt', content: 'hello' }, parameter_hash: sha256Hex(canonicalJson({ content: 'hello', path: '/tmp/a.txt' })) },
    decision: { verdict: 'deny', guard: 'CapabilityGuard' },
    tool_origin: 'host_executed_provider_reported',
    metadata: { gate_request_id: decided.requestId, gate_deny_details: { reason_code: 'capability_required' } },
  })
  t.match(ports.stored, [{ receiptId: decided.receipt.id, httpJson: null, toolServer: 'fs', toolName: 'write_file', outcome: 'deny', method: 'tools/call' }])
})

t.test('a session-allowed tool runs without a token; a granted one with it, filed under the token and its agent', async t => {
  const { tools, ports } = setup()
  const open = await tools.decide(call({ tool: 'list_files', params: {}, policy: OPEN }))
  t.match(open.verdict, { verdict: 'allow' })
  t.match(open.evidence, [{ guard_name: 'DefaultPolicyGuard', verdict: true, details: 'session-scoped allow (--allow-tool list_files)' }])
  const token = kernelToken([{ server_id: 'fs', tool_name: 'write_file' }])
  const granted = await tools.decide(call({ capabilityToken: encodeCapabilityToken(token) }))
  t.match(granted.verdict, { verdict: 'allow' })
  t.equal(granted.receipt.capability_id, token.id)
  t.ok(verifies(granted.receipt))
  t.match(ports.stored.at(-1), { capabilityId: token.id, subjectKey: KERNEL_AGENT.publicKey, outcome: 'allow' })
})

t.test("the grant's server id must match, and its argument constraints are decided on the call's arguments", async t => {
  const { tools } = setup()
  const other = kernelToken([{ server_id: 'other', tool_name: '*' }])
  t.match((await tools.decide(call({ capabilityToken: JSON.stringify(other) }))).verdict, { details: { reason_code: 'scope_mismatch' } })
  const confined = kernelToken([{ server_id: 'fs', tool_name: 'write_file', constraints: [{ type: 'path_prefix', value: '/tmp' }] }])
  t.match((await tools.decide(call({ capabilityToken: JSON.stringify(confined) }))).verdict, { verdict: 'allow' })
  const outside = await tools.decide(call({ capabilityToken: JSON.stringify(confined), params: { path: '/etc/passwd', content: 'x' } }))
  t.match(outside.verdict, { verdict: 'deny', details: { reason_code: 'constraint_unsatisfied' } })
})

t.test('expired, revoked and widened tokens are denied', async t => {
  const { tools, ports } = setup()
  const expired = kernelToken([{ server_id: 'fs', tool_name: '*' }], { issued_at: KERNEL_NOW - 100, expires_at: KERNEL_NOW - 1 })
  t.match((await tools.decide(call({ capabilityToken: JSON.stringify(expired) }))).verdict, { details: { reason_code: 'capability_expired' } })
  const revoked = kernelToken([{ server_id: 'fs', tool_name: '*' }])
  ports.revoked.add(revoked.id)
  t.match((await tools.decide(call({ capabilityToken: JSON.stringify(revoked) }))).verdict, { guard: 'RevocationGuard', details: { reason_code: 'capability_revoked' } })
  const widened = widenedDelegation({ authority: KERNEL_AUTHORITY, delegatee: exampleSigner('ed25519', 40), subject: KERNEL_AGENT.publicKey, now: KERNEL_NOW, delegatedTool: 'read_file' })
  t.match((await tools.decide(call({ capabilityToken: JSON.stringify(widened) }))).verdict, { verdict: 'deny', details: { reason_code: /^capability_/ } })
})

t.test('an unknown tool or bad arguments are denied after the policy guards, with a receipt', async t => {
  const { tools } = setup()
  const noToken = await tools.decide(call({ tool: 'nope', inputProblem: { code: 'tool_unknown', reason: 'fs has no tool nope' } }))
  t.match(noToken.verdict, { guard: 'CapabilityGuard', details: { reason_code: 'capability_required' } }, 'a caller without a grant learns nothing of the tool')
  const all = JSON.stringify(kernelToken([{ server_id: 'fs', tool_name: '*' }]))
  const unknown = await tools.decide(call({ tool: 'nope', capabilityToken: all, inputProblem: { code: 'tool_unknown', reason: 'fs has no tool nope' } }))
  t.match(unknown.verdict, { guard: 'ToolInputGuard', reason: 'fs has no tool nope', details: { reason_code: 'tool_unknown', receipt_id: unknown.receipt.id } })
  const invalid = await tools.decide(call({ capabilityToken: all, inputProblem: { code: 'arguments_invalid', reason: 'content must be string' } }))
  t.match(invalid.verdict, { guard: 'ToolInputGuard', details: { reason_code: 'arguments_invalid' } })
  t.ok(verifies(invalid.receipt))
})

t.test('an authorization member this path does not enforce is denied at the boundary, never ignored', async t => {
  const { tools } = setup()
  const decided = await tools.decide(call({ policy: OPEN, unenforced: ['approval_tokens'] }))
  t.match(decided.verdict, { guard: 'AuthorityBoundaryGuard', details: { reason_code: 'approval_tokens_unsupported' } })
})

t.test('an approval binds to the exact call: pending, then allowed once for the same arguments only', async t => {
  const { tools, ports } = setup()
  const gated: ToolPolicy = { ...OPEN, approvalRequired: true }
  const pending = await tools.decide(call({ policy: gated }))
  t.match(pending.verdict, { verdict: 'deny', guard: 'ApprovalGuard', http_status: 409, details: { reason_code: 'approval_required' } })
  const id = pending.approval!.approval_id
  t.match(pending.approval, { resume_path: `/approvals/${id}/respond`, expires_at: KERNEL_NOW + 3600 })
  t.match(ports.approvalRecords.get(id), { method: 'tools/call', routePattern: 'fs:write_file', decisionReceiptId: pending.receipt.id, state: 'pending' })
  ports.approvalRecords.get(id)!.state = 'approved'
  const other = await tools.decide(call({ policy: gated, approvalId: id, params: { path: '/tmp/a.txt', content: 'other' } }))
  t.match(other.verdict, { verdict: 'deny', details: { reason_code: 'approval_invalid' } }, 'approving one argument set never approves another')
  t.match((await tools.decide(call({ policy: gated, approvalId: id }))).verdict, { verdict: 'allow' })
  t.match((await tools.decide(call({ policy: gated, approvalId: id }))).verdict, { verdict: 'deny', details: { reason_code: 'approval_invalid' } }, 'allowed once')
})

t.test('finish records how an allowed call ended, linked to its decision', async t => {
  const { tools, ports } = setup()
  const decided = await tools.decide(call({ policy: OPEN }))
  const final = await tools.finish(decided, { verdict: 'incomplete', reason: 'the tool server exited (code 1)' })
  t.ok(verifies(final.receipt))
  t.match(final.receipt, { decision: { verdict: 'incomplete', reason: 'the tool server exited (code 1)' }, action: decided.receipt.action, metadata: { gate_decision_receipt_id: decided.receipt.id } })
  t.match(ports.stored.at(-1), { kind: 'final', decisionReceiptId: decided.receipt.id, outcome: 'incomplete' })
})

t.test('guards see the session the edge counted; delegation_depth is the presented capability\'s delegation chain', async t => {
  const { kernel } = setupKernel({ routeTable: null })
  const tools = new ToolCallKernel(kernel)
  const seen: unknown[] = []
  const run = kernel.guards.run.bind(kernel.guards)
  // observe the context every guard is handed, then run the guards as they are
  kernel.guards.run = (ctx, evidence) => {
    seen.push(ctx.session)
    return run(ctx, evidence)
  }
  const edge = new EdgeSessionContext('mcp_session-1', ANONYMOUS_CALLER, { now: KERNEL_NOW })
  await tools.decide(call({ tool: 'list_files', params: {}, policy: OPEN, session: edge.beginCall({}) }))
  edge.wrote({ content: [] })
  const delegatee = exampleSigner('ed25519', 13)
  const token = delegatedChild({
    signers: [KERNEL_AUTHORITY, delegatee],
    delegated: [{ scope: { grants: [{ server_id: 'fs', tool_name: '*' }] }, expires_at: KERNEL_NOW + 600 }],
    child: { scope: { grants: [{ server_id: 'fs', tool_name: 'write_file' }] }, expires_at: KERNEL_NOW + 300 },
    subject: KERNEL_AGENT.publicKey,
    now: KERNEL_NOW,
  })
  await tools.decide(call({ capabilityToken: encodeCapabilityToken(token), session: edge.beginCall({ path: '/tmp/a.txt' }) }))
  await tools.decide(call())
  t.match(seen, [
    { session_id: 'mcp_session-1', request_count: 1, delegation_depth: 0, bytes_read: 2, bytes_written: 0, created_at: KERNEL_NOW },
    { session_id: 'mcp_session-1', request_count: 2, delegation_depth: 1, bytes_read: 2 + JSON.stringify({ path: '/tmp/a.txt' }).length, bytes_written: JSON.stringify({ content: [] }).length },
    undefined,
  ])
})
