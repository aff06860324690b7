// End to end: the session life of the real `gate mcp serve-http` (spec 03, "States and transitions",
// "Events"): Last-Event-ID replay with ids `{session_id}-{sequence}`, 409 outside the window or for
// another session's event, one GET stream per session, DELETE, idle expiry, the drain on SIGTERM, a
// session that survives a restart of the edge (the edge-session store beside the receipt store), and
// the cap on one caller's sessions.
import t, { type Test } from 'tap'
import { createServer, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { initializeMessage as initialize, PROTOCOL_VERSION, rawPost, rawRequest, rawSession, readStream, startGateMcpHttp, type GateMcpHttp } from '../testing/mcp-http-session.js'
import { runGate } from '../testing/spawn-gate.js'

const FIXTURE = ['--', process.execPath, FIXTURE_SERVER_PATH]
const TOKEN_A = 'agent-a-token-0123456789'
const TOKEN_B = 'agent-b-token-0123456789'
const ADMIN_TOKEN = 'admin-token-for-mcp-session-tests'

async function setup(t: Test, extra: string[] = []): Promise<{ gate: GateMcpHttp; args: string[]; db: string }> {
  const files = await gateFiles(t)
  const args = ['--receipt-store', files.db, '--authority-seed-file', files.seed, '--server-id', 'fs', '--allow-tool', 'echo', '--allow-tool', 'progress', '--allow-tool', 'release', ...extra, ...FIXTURE]
  return { gate: await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', ...args]), args, db: files.db }
}

const call = (id: number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
})
const sessionHeaders = (id: string, extra: Record<string, string> = {}) => ({ accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': id, ...extra })
const streamHeaders = (id: string, extra: Record<string, string> = {}) => ({ accept: 'text/event-stream', 'mcp-session-id': id, ...extra })
const hasResult = (events: { data: string }[]) => events.some(e => e.data.includes('"result"'))

t.test('a client that hangs up mid-stream replays what it missed with Last-Event-ID; ids are {session_id}-{sequence}', async t => {
  const { gate } = await setup(t)
  const id = await rawSession(gate.url)
  // progress reports twice and answers only once release is called: hang up after the progress
  const first = await readStream(gate.url, { method: 'POST', headers: sessionHeaders(id), body: JSON.stringify(call(2, 'progress', {}, { progressToken: 'p' })) }, events => events.filter(e => e.data.includes('notifications/progress')).length === 2)
  t.equal(first.status, 200)
  const ids = first.events.map(e => e.id)
  t.ok(ids.every(eventId => new RegExp(`^${id}-\\d+$`).test(eventId ?? '')), 'every event id is {session_id}-{sequence}')
  const sequences = ids.map(eventId => Number(eventId!.slice(id.length + 1)))
  t.same(sequences, [...sequences].sort((a, b) => a - b), 'sequences count up')
  t.notOk(hasResult(first.events))
  const released = await rawPost(gate.url, call(3, 'release'), { 'mcp-session-id': id })
  t.equal(released.status, 200)
  const replay = await readStream(gate.url, { method: 'GET', headers: streamHeaders(id, { 'last-event-id': ids[ids.length - 1]! }) }, hasResult)
  t.equal(replay.status, 200)
  const result = replay.events.find(e => e.data.includes('"result"'))!
  t.match(JSON.parse(result.data), { id: 2, result: { content: [{ text: 'done' }], _meta: { gate: { verdict: 'allow' } } } })
  t.ok(Number(result.id!.slice(id.length + 1)) > sequences[sequences.length - 1]!, 'the missed event follows the last one seen')
  t.notOk(replay.events.some(e => e.data.includes('notifications/progress')), 'nothing already seen is sent again')
})

t.test('a replay outside the retained window, of another session or of no event is 409', async t => {
  const { gate } = await setup(t, ['--replay-window', '3'])
  const id = await rawSession(gate.url)
  const other = await rawSession(gate.url)
  for (let n = 0; n < 3; n++) t.equal((await rawPost(gate.url, call(10 + n, 'echo', { text: `${n}` }), { 'mcp-session-id': id })).status, 200)
  for (const lastEventId of [`${id}-1`, `${other}-1`, `${id}-999`, 'not-an-event-id']) {
    const refused = await rawRequest(gate.url, 'GET', streamHeaders(id, { 'last-event-id': lastEventId }))
    t.equal(refused.status, 409, lastEventId)
    t.match(refused.json(), { error: 'gate_replay_window_exceeded', message: /Conflict: Last-Event-ID/ })
  }
})

t.test('one GET stream per session: a second is 409 while the first is open', async t => {
  const { gate } = await setup(t)
  const id = await rawSession(gate.url)
  const abort = new AbortController()
  const open = await fetch(gate.url, { headers: streamHeaders(id), signal: abort.signal })
  t.equal(open.status, 200)
  const second = await rawRequest(gate.url, 'GET', streamHeaders(id))
  t.equal(second.status, 409)
  t.equal(second.json().error, 'gate_stream_already_open')
  abort.abort()
})

t.test('sessions are isolated: another principal cannot use, delete or replay a session', async t => {
  const files = await gateFiles(t)
  const tokens = join(files.dir, 'tokens')
  writeFileSync(tokens, `${TOKEN_A}\n${TOKEN_B}\n`)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--admission-token-file', tokens, '--allow-tool', 'echo', ...FIXTURE])
  const a = { authorization: `Bearer ${TOKEN_A}` }
  const b = { authorization: `Bearer ${TOKEN_B}` }
  const sessionA = await rawSession(gate.url, a)
  const sessionB = await rawSession(gate.url, b)
  const called = await rawPost(gate.url, call(2, 'echo', { text: 'secret' }), { ...a, 'mcp-session-id': sessionA })
  t.equal(called.status, 200)
  const stolen = await rawPost(gate.url, call(3, 'echo', { text: 'x' }), { ...b, 'mcp-session-id': sessionA })
  t.equal(stolen.status, 404, "B's token on A's session is an unknown session")
  t.equal((await rawRequest(gate.url, 'GET', streamHeaders(sessionA, b))).status, 404, "B cannot open A's stream")
  t.equal((await rawRequest(gate.url, 'DELETE', { ...b, 'mcp-session-id': sessionA })).status, 404, "B cannot delete A's session")
  const crossReplay = await rawRequest(gate.url, 'GET', streamHeaders(sessionB, { ...b, 'last-event-id': `${sessionA}-2` }))
  t.equal(crossReplay.status, 409, "A's event id is never replayed on B's session")
  t.equal((await rawPost(gate.url, call(4, 'echo', { text: 'still' }), { ...a, 'mcp-session-id': sessionA })).status, 200, "A's session is untouched")
})

t.test('DELETE ends a session: it never resumes, the client must initialize again', async t => {
  const { gate } = await setup(t)
  const { client, transport } = await gate.connect()
  const id = transport.sessionId!
  t.match(gateMeta((await client.callTool({ name: 'echo', arguments: { text: 'a' } })) as CallToolResult), { verdict: 'allow' })
  await transport.terminateSession()
  const after = await rawPost(gate.url, call(5, 'echo', { text: 'b' }), { 'mcp-session-id': id })
  t.equal(after.status, 404)
  t.match(after.json(), { error: 'gate_session_terminated', message: /Session deleted: initialize a new session/ })
  t.equal((await rawRequest(gate.url, 'DELETE', { 'mcp-session-id': id })).status, 404)
  t.equal((await rawRequest(gate.url, 'DELETE', { 'mcp-session-id': 'never-was' })).status, 404)
})

t.test('an idle session expires; a request on it is 404 and the SDK client must initialize again', async t => {
  const { gate } = await setup(t, ['--session-idle-secs', '1'])
  const { client, transport } = await gate.connect()
  const id = transport.sessionId!
  await client.listTools()
  const mark = gate.proc.output().length
  // the SDK client holds a GET stream open, which keeps a session alive: hang up without DELETE
  await client.close()
  await gate.waitForOutput(new RegExp(`session ${id} expired`), mark)
  const after = await rawPost(gate.url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { 'mcp-session-id': id })
  t.equal(after.status, 404)
  t.match(after.json(), { error: 'gate_session_terminated', message: /Session expired/ })
  const { client: again } = await gate.connect({ sessionId: id })
  await t.rejects(again.listTools(), /404|Session/, 'the old id is not resumed')
})

t.test('SIGTERM drains: new requests get 503, the call in flight completes, the process exits 0', async t => {
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  let arrived!: () => void
  const requested = new Promise<void>(resolve => (arrived = resolve))
  const upstream = createServer((_req, res: ServerResponse) => {
    arrived()
    void released.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}'))
  })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  t.teardown(() => upstream.close())
  const files = await gateFiles(t)
  const spec = join(files.dir, 'slow.yaml')
  writeFileSync(spec, "openapi: 3.1.0\ninfo: { title: Slow, version: 1.0.0 }\npaths:\n  /slow:\n    get:\n      operationId: slow\n      responses: { '200': { description: ok } }\n")
  const port = (upstream.address() as AddressInfo).port
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--spec', spec, '--upstream', `http://127.0.0.1:${port}`])
  const { client, transport } = await gate.connect()
  const inFlight = client.callTool({ name: 'slow', arguments: {} }) as Promise<CallToolResult>
  await requested
  const mark = gate.proc.output().length
  gate.proc.child.kill('SIGTERM')
  await gate.waitForOutput(/draining: new requests get 503/, mark)
  const fresh = await rawPost(gate.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
  t.equal(fresh.status, 503)
  t.match(fresh.json(), { error: 'gate_edge_draining', transient: true })
  t.equal(fresh.headers.get('retry-after'), '1')
  t.equal(fresh.headers.get('retry-after'), '1')
  t.equal((await rawPost(gate.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': transport.sessionId! })).status, 503, 'the draining session takes no new request')
  release()
  t.match(await inFlight, { structuredContent: { slow: true }, _meta: { gate: { verdict: 'allow' } } }, 'the call in flight completes')
  t.equal(await gate.proc.exited, 0)
  const receipts = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'slow'])
  t.match(receipts.stdout, /"verdict":"allow"/)
})

t.test('a session survives a restart of the edge: replay from before the stop, then the next call is allowed', async t => {
  const { gate, args, db } = await setup(t)
  const port = new URL(gate.url).port
  const { client, transport } = await gate.connect()
  const id = transport.sessionId!
  t.match(gateMeta((await client.callTool({ name: 'echo', arguments: { text: 'before' } })) as CallToolResult), { verdict: 'allow' })
  // a call whose answer the client will ask for again after the restart
  const sent = await readStream(gate.url, { method: 'POST', headers: sessionHeaders(id, { 'mcp-protocol-version': PROTOCOL_VERSION }), body: JSON.stringify(call(50, 'echo', { text: 'in the window' })) }, hasResult)
  const priming = sent.events[0]!.id!
  const answered = sent.events.find(e => e.data.includes('"result"'))!
  await client.close()
  t.equal(await gate.proc.stop('SIGTERM'), 0)
  const restarted = await startGateMcpHttp(t, ['--listen', `127.0.0.1:${port}`, ...args])
  const replay = await readStream(restarted.url, { method: 'GET', headers: streamHeaders(id, { 'last-event-id': priming }) }, hasResult)
  t.equal(replay.status, 200)
  t.same(replay.events.filter(e => e.data !== ''), [answered], 'the same event, with the same id, from the store')
  t.match(restarted.proc.output(), new RegExp(`session ${id} resumed from the edge-session store`))
  const { client: resumed } = await restarted.connect({ sessionId: id })
  t.match(gateMeta((await resumed.callTool({ name: 'echo', arguments: { text: 'after' } })) as CallToolResult), { verdict: 'allow' }, 'the next call is allowed')
  const versionClash = await rawPost(restarted.url, call(51, 'echo', { text: 'x' }), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' })
  t.equal(versionClash.status, 400, "the resumed session keeps its bound protocol version")
  const listed = await runGate(['receipt', 'list', '--receipt-db', db, '--admin-all', '--tool-name', 'echo'])
  t.equal(listed.stdout.trim().split('\n').length, 3)
})

const gateMeta = (result: CallToolResult) => (result._meta as { gate: Record<string, string> }).gate

t.test('sessions per caller are capped: past the cap 429 with Retry-After; ended sessions free their places; other callers are unaffected', async t => {
  const files = await gateFiles(t)
  const tokens = join(files.dir, 'tokens')
  writeFileSync(tokens, `${TOKEN_A}\n${TOKEN_B}\n`)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--admission-token-file', tokens, '--max-sessions-per-caller', '3', '--allow-tool', 'echo', ...FIXTURE], { env: { GATE_ADMIN_TOKEN: ADMIN_TOKEN } })
  const a = { authorization: `Bearer ${TOKEN_A}` }
  const b = { authorization: `Bearer ${TOKEN_B}` }
  const opened = [await rawSession(gate.url, a), await rawSession(gate.url, a), await rawSession(gate.url, a)]
  const refused = await rawPost(gate.url, initialize(), a)
  t.equal(refused.status, 429, "the caller's fourth session is refused")
  t.match(refused.json(), { error: 'gate_too_many_sessions', message: /3 sessions/, transient: true })
  t.match(refused.headers.get('retry-after'), /^[1-9]\d*$/, 'Retry-After in whole seconds')
  t.notOk(refused.headers.get('mcp-session-id'), 'no session is made')
  const sessionsOfB = [await rawSession(gate.url, b), await rawSession(gate.url, b), await rawSession(gate.url, b)]
  t.equal(sessionsOfB.length, 3, 'another caller opens its own three')
  t.equal((await rawPost(gate.url, initialize(), b)).status, 429, 'and is capped on its own')
  t.equal((await rawPost(gate.url, call(2, 'echo', { text: 'still' }), { ...a, 'mcp-session-id': opened[0]! })).status, 200, "the caller's open sessions keep working")
  t.equal((await rawRequest(gate.url, 'DELETE', { ...a, 'mcp-session-id': opened[0]! })).status, 200)
  const fourth = await rawSession(gate.url, a)
  t.ok(fourth, 'a DELETE frees a place')
  t.equal((await rawPost(gate.url, initialize(), a)).status, 429, 'and only one')
  t.equal((await rawRequest(`${gate.base}/admin/sessions/${opened[1]}`, 'DELETE', { authorization: `Bearer ${ADMIN_TOKEN}` })).status, 200)
  t.ok(await rawSession(gate.url, a), 'a session the admin closed frees its place')
})

t.test('the per-caller cap defaults to 16 and counts the anonymous loopback caller as one', async t => {
  const { gate } = await setup(t)
  for (let n = 0; n < 16; n++) await rawSession(gate.url)
  const refused = await rawPost(gate.url, initialize())
  t.equal(refused.status, 429)
  t.match(refused.json(), { error: 'gate_too_many_sessions', message: /16 sessions/ })
  const help = await runGate(['mcp', 'serve-http', '--help'])
  t.match(help.stdout, /--max-sessions-per-caller N\s+live sessions one caller [\s\S]*?past it 429 \(default 16\)/)
})

t.test('an expired session frees its place under the per-caller cap', async t => {
  const { gate } = await setup(t, ['--max-sessions-per-caller', '1', '--session-idle-secs', '1'])
  const mark = gate.proc.output().length
  const id = await rawSession(gate.url)
  await gate.waitForOutput(new RegExp(`session ${id} expired`), mark)
  t.ok(await rawSession(gate.url), 'the next session opens')
})
