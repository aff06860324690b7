// End to end: the real `gate run` wrapping the fixture MCP server (@gate/mcp/testing) with the driven
// test agent (@gate/wire/testing) as its agent process, speaking the native wire on GATE_WIRE_SOCKET.
// Receipts land in a SQLite store under t.testdir() and are checked with the real `gate receipt
// verify` and `gate receipt list`.
import t from 'tap'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createSigner, generateSecret, signCapability, type CapabilityToken, type ToolGrant } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate } from '../testing/spawn-gate.js'
import { FIXTURE_TOOL_SERVER, startGateRun } from '../testing/wire-run.js'

const CONTROL_TOKEN = 'control-token-for-wire-tests'
const now = () => Math.floor(Date.now() / 1000)
const subject = createSigner({ secret: generateSecret() }).publicKey

async function setup(t: Parameters<typeof gateFiles>[0]) {
  const files = await gateFiles(t)
  const gate = await startGateRun(t, ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--tool-server', FIXTURE_TOOL_SERVER], { GATE_CONTROL_TOKEN: CONTROL_TOKEN })
  const authority = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') })
  return { ...files, gate, authority }
}

function mint(authority: ReturnType<typeof createSigner>, grants: ToolGrant[], expiresAt = now() + 3600): CapabilityToken {
  return signCapability({ schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 6).join('')}`, subject, scope: { grants }, issued_at: now() - 10, expires_at: expiresAt }, authority)
}

const request = (id: string, token: unknown, tool: string, params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({ type: 'tool_call_request', id, capability_token: token, server_id: 'fx', tool, params, ...extra })

t.test('an allowed call answers ok with the result, and its receipt verifies with gate receipt verify', async t => {
  const { gate, seed, db, dir, authority } = await setup(t)
  // the token as `gate capability issue` prints it offline, put in capability_token as is
  const issued = await runGate(['capability', 'issue', '--subject', subject, '--tool', 'fx:echo', '--authority-seed-file', seed, '--json'])
  t.equal(issued.code, 0, issued.stderr)
  const line = issued.stdout.trim()
  t.equal(line.split('\n').length, 1, 'one line of JSON')
  gate.agent.send(request('c1', line, 'echo', { text: 'hi' }))
  const response = await gate.agent.frame('tool_call_response', 'c1')
  t.same(response.result, { status: 'ok', value: { content: [{ type: 'text', text: 'echo: hi' }] } })
  const receipt = response.receipt as Record<string, unknown>
  t.match(receipt, { tool_server: 'fx', tool_name: 'echo', capability_id: JSON.parse(line).id, decision: { verdict: 'allow' }, action: { parameters: { text: 'hi' } } })
  const event = gate.agent.events.find(e => e.message?.id === 'c1' && e.message?.type === 'tool_call_response')!
  const file = join(dir, 'receipt.jsonl')
  writeFileSync(file, `${event.receipt_text as string}\n`)
  const verified = await runGate(['receipt', 'verify', file, '--trusted-key', authority.publicKey])
  t.equal(verified.code, 0, verified.stdout + verified.stderr)
  gate.agent.exit(0)
  t.equal(await gate.exited, 0)
  const listed = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', 'echo'])
  t.match(listed.stdout, receipt.id as string, 'the receipt is in the store')
})

t.test('denied calls answer err with the ToolCallError of the guard that refused, each with a deny receipt', async t => {
  const { gate, authority } = await setup(t)
  const echoOnly = mint(authority, [{ server_id: 'fx', tool_name: 'echo' }])
  const everything = mint(authority, [{ server_id: 'fx', tool_name: '*' }])
  const cases: [string, Record<string, unknown>, (err: Record<string, unknown>) => void][] = [
    ['scope', request('d1', echoOnly, 'write_note', { path: '/a', content: 'x' }), e => t.match(e, { code: 'capability_denied', detail: /^scope_mismatch: / })],
    ['garbage token', request('d2', { not: 'a token' }, 'echo', { text: 'x' }), e => t.match(e, { code: 'capability_denied', detail: /^capability_malformed: / })],
    ['expired', request('d3', mint(authority, [{ server_id: 'fx', tool_name: 'echo' }], now() - 5), 'echo', { text: 'x' }), e => t.same(e, { code: 'capability_expired' })],
    ['unknown tool', request('d4', everything, 'no_such_tool'), e => t.match(e, { code: 'policy_denied', detail: { guard: 'ToolInputGuard', reason: /^tool_unknown: / } })],
    ['arguments', request('d5', everything, 'echo', { text: 7 }), e => t.match(e, { code: 'policy_denied', detail: { guard: 'ToolInputGuard', reason: /^arguments_invalid: / } })],
    ['unknown server', { ...request('d6', everything, 'echo', { text: 'x' }), server_id: 'nope' }, e => t.match(e, { code: 'capability_denied', detail: /^scope_mismatch: / })],
    // spec 03: refused before evaluation (the authority boundary runs before any grant is read)
    ['approval_token with approval_tokens', request('d7', everything, 'echo', { text: 'x' }, { approval_token: { a: 1 }, approval_tokens: [{ b: 2 }] }), e => t.match(e, { code: 'policy_denied', detail: { guard: 'AuthorityBoundaryGuard', reason: /^approval_token_unsupported: / } })],
    ['proposal without approval_tokens', request('d8', everything, 'echo', { text: 'x' }, { threshold_approval_proposal: { p: 1 } }), e => t.match(e, { code: 'policy_denied', detail: { guard: 'AuthorityBoundaryGuard', reason: /^threshold_approval_proposal_unsupported: / } })],
    ['approval_tokens without a proposal', request('d9', everything, 'echo', { text: 'x' }, { approval_tokens: [{ b: 2 }] }), e => t.match(e, { code: 'policy_denied', detail: { guard: 'AuthorityBoundaryGuard', reason: /^approval_tokens_unsupported: / } })],
  ]
  for (const [, message] of cases) gate.agent.send(message)
  for (const [name, message, check] of cases) {
    const response = await gate.agent.frame('tool_call_response', message.id as string)
    t.equal((response.result as { status: string }).status, 'err', name)
    check((response.result as { error: Record<string, unknown> }).error)
    t.match(response.receipt, { decision: { verdict: 'deny' }, tool_name: message.tool }, `${name}: a deny receipt`)
  }
  t.same(gate.agent.framesOf('d1').map(f => f.type), ['tool_call_response'], 'no chunk before a denial')
})

t.test('heartbeat is answered; list_capabilities lists the authentic capabilities this connection presented', async t => {
  const { gate, authority } = await setup(t)
  gate.agent.send({ type: 'heartbeat' })
  await gate.agent.frame('heartbeat')
  gate.agent.send({ type: 'list_capabilities' })
  t.same((await gate.agent.frame('capability_list')).capabilities, [], 'none presented yet')
  const token = mint(authority, [{ server_id: 'fx', tool_name: 'echo' }])
  const forged = { ...token, id: 'cap-forged' }
  gate.agent.send(request('l1', token, 'echo', { text: 'a' }))
  gate.agent.send(request('l2', forged, 'echo', { text: 'b' }))
  await gate.agent.frame('tool_call_response', 'l1')
  await gate.agent.frame('tool_call_response', 'l2')
  const from = gate.agent.events.length
  gate.agent.send({ type: 'list_capabilities' })
  const list = await gate.agent.waitFor(e => e.message?.type === 'capability_list', from)
  t.same(list.message!.capabilities, [token], 'the authentic token, exactly as presented; not the forged one')
})

t.test("the agent's exit status is gate run's; SIGTERM reaches the agent; the socket and its directory are removed", async t => {
  const { gate } = await setup(t)
  const mode = statSync(gate.socketPath).mode
  t.equal(mode & 0o777, 0o600, 'the socket is owner-only')
  t.equal(statSync(dirname(gate.socketPath)).mode & 0o777, 0o700, 'in a directory only its owner can enter')
  gate.child.kill('SIGTERM')
  await gate.agent.waitFor(e => e.event === 'signal' && e.signal === 'SIGTERM')
  t.equal(await gate.exited, 3, 'the driven agent exits 3 on SIGTERM')
  t.notOk(existsSync(gate.socketPath), 'socket removed')
  t.notOk(existsSync(dirname(gate.socketPath)), 'directory removed')
  t.notMatch(gate.output(), /"level":"(error|fatal)"/)
})
