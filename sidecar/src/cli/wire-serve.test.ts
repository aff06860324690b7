// End to end: the real `gate wire serve` wrapping the fixture MCP server, driven by the SDK's agent
// client (@gate/sdk/wire WireClient): over a Unix socket, and over TCP with mutual TLS; each connection
// is a receipt chain of its own.
import t, { type Test } from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSigner, generateSecret, signCapability, type CapabilityToken } from '@gate/sdk'
import { WireClient } from '@gate/sdk/wire'
import { gateFiles } from '../testing/gate-files.js'
import { runGate } from '../testing/spawn-gate.js'
import { FIXTURE_TOOL_SERVER } from '../testing/wire-run.js'
import { makeMtlsFiles, startWireServe } from '../testing/wire-serve.js'

const CONTROL_TOKEN = 'control-token-for-wire-tests'
const now = () => Math.floor(Date.now() / 1000)

async function files(t: Test) {
  const f = await gateFiles(t)
  const authority = createSigner({ secret: Buffer.from(readFileSync(f.seed, 'utf8').trim(), 'hex') })
  const token: CapabilityToken = signCapability(
    { schema: 'gate.capability.v1', id: `cap-${generateSecret().slice(0, 6).join('')}`, subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'fx', tool_name: '*' }] }, issued_at: now() - 10, expires_at: now() + 3600 },
    authority,
  )
  return { ...f, token }
}

// a socket path must fit 107 bytes, which a test directory's name may not
function socketPath(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'gate-wire-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'wire.sock')
}

t.test('over a Unix socket: results and receipts, chunks as an async iterator, revocations as events', async t => {
  const { db, seed, token } = await files(t)
  const path = socketPath(t)
  const gate = await startWireServe(t, ['--listen', `unix:${path}`, '--receipt-store', db, '--authority-seed-file', seed, '--tool-server', FIXTURE_TOOL_SERVER], { GATE_CONTROL_TOKEN: CONTROL_TOKEN })
  t.equal(gate.url, `unix:${path}`)
  const client = await WireClient.connect(path)
  t.teardown(() => client.close())
  await client.heartbeat()
  const echo = await client.callTool({ serverId: 'fx', tool: 'echo', params: { text: 'hi' }, capabilityToken: token })
  t.same(echo.result, { status: 'ok', value: { content: [{ type: 'text', text: 'echo: hi' }] } })
  t.match(echo.receipt, { decision: { verdict: 'allow' }, capability_id: token.id })
  t.equal(JSON.parse(echo.receiptText).id, echo.receipt.id, 'the receipt text as received')

  const progress = client.call({ serverId: 'fx', tool: 'progress', capabilityToken: token })
  const chunks: unknown[] = []
  for await (const chunk of progress) {
    chunks.push(chunk)
    if (chunks.length === 2) await client.callTool({ serverId: 'fx', tool: 'release', capabilityToken: token })
  }
  t.same(chunks, [{ progress: 1, total: 2 }, { progress: 2, total: 2 }])
  t.match((await progress.outcome).result, { status: 'ok' })
  t.same(await client.listCapabilities(), [token])

  const pushed = new Promise<string>(resolve => client.on('capability_revoked', resolve))
  const revoked = await runGate(['capability', 'revoke', token.id, '--control-url', gate.controlUrl], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.equal(revoked.code, 0, revoked.stderr)
  t.equal(await pushed, token.id)
  t.same((await client.callTool({ serverId: 'fx', tool: 'echo', params: { text: 'x' }, capabilityToken: token })).result, { status: 'err', error: { code: 'capability_revoked' } })
})

t.test('stopping with a call in flight answers it cancelled, with the chunks received and a cancelled receipt', async t => {
  const { seed, token } = await files(t)
  const path = socketPath(t)
  const gate = await startWireServe(t, ['--listen', `unix:${path}`, '--allow-ephemeral-receipts', '--authority-seed-file', seed, '--tool-server', FIXTURE_TOOL_SERVER])
  const client = await WireClient.connect(path)
  const call = client.call({ serverId: 'fx', tool: 'progress', capabilityToken: token })
  let seen = 0
  for await (const _chunk of call) if (++seen === 2) break
  gate.child.kill('SIGTERM')
  const outcome = await call.outcome
  t.same(outcome.result, { status: 'cancelled', reason: 'gate wire serve is stopping', chunks_received: 2 })
  t.match(outcome.receipt, { decision: { verdict: 'cancelled', reason: 'gate wire serve is stopping' }, tool_name: 'progress' })
  t.equal(await client.closed, undefined, 'then the kernel ends the transport cleanly')
  t.equal(await gate.exited, 0)
})

t.test('over TCP with mutual TLS: a client certificate of the CA is served, any other is refused', async t => {
  const { seed, dir, token } = await files(t)
  const tls = makeMtlsFiles(dir)
  const gate = await startWireServe(t, ['--listen', '127.0.0.1:0', '--tls-cert', tls.serverCert, '--tls-key', tls.serverKey, '--tls-client-ca', tls.ca, '--allow-ephemeral-receipts', '--authority-seed-file', seed, '--tool-server', FIXTURE_TOOL_SERVER])
  const port = Number(/:(\d+)$/.exec(gate.url)![1])
  t.match(gate.url, /^tls:\/\/127\.0\.0\.1:\d+$/)
  const client = await WireClient.connect({ host: '127.0.0.1', port, tls: { ...tls.client, servername: undefined } })
  t.teardown(() => client.close())
  t.match((await client.callTool({ serverId: 'fx', tool: 'echo', params: { text: 'tls' }, capabilityToken: token })).result, { status: 'ok' })
  for (const [name, identity] of [['a stranger', tls.stranger], ['no certificate', { ca: tls.client.ca }]] as const) {
    const refused = await WireClient.connect({ host: '127.0.0.1', port, tls: identity }).then(
      c => c.heartbeat().then(() => 'answered', () => 'refused'),
      () => 'refused',
    )
    t.equal(refused, 'refused', `${name} is refused`)
  }
})

t.test('TCP without mutual TLS, or TLS flags on a Unix socket, is refused before anything starts', async t => {
  const { seed } = await files(t)
  const base = ['--allow-ephemeral-receipts', '--authority-seed-file', seed, '--tool-server', FIXTURE_TOOL_SERVER]
  const plain = await runGate(['wire', 'serve', '--listen', '127.0.0.1:0', ...base])
  t.equal(plain.code, 2)
  t.match(plain.stderr, 'a TCP listener needs mutual TLS')
  const mixed = await runGate(['wire', 'serve', '--listen', 'unix:/tmp/x.sock', '--tls-client-ca', '/nope', ...base])
  t.equal(mixed.code, 2)
  t.match(mixed.stderr, 'a Unix socket is guarded by its file permissions')
})

t.test('each connection is a receipt chain of its own (spec 03 Receipt DAG): a call follows the one before it', async t => {
  const { db, seed, token } = await files(t)
  const path = socketPath(t)
  const gate = await startWireServe(t, ['--listen', `unix:${path}`, '--receipt-store', db, '--authority-seed-file', seed, '--tool-server', FIXTURE_TOOL_SERVER], { GATE_CONTROL_TOKEN: CONTROL_TOKEN })
  const [a, b] = [await WireClient.connect(path), await WireClient.connect(path)]
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const call = async (client: WireClient) => (await client.callTool({ serverId: 'fx', tool: 'echo', params: { text: 'hi' }, capabilityToken: token })).receipt as unknown as { id: string; chainId: string; parentReceiptIds: string[]; dagOrdinal: number }
  const first = await call(a)
  const second = await call(a)
  const other = await call(b)
  t.match(first, { parentReceiptIds: [], dagOrdinal: 0 })
  t.match(second, { chainId: first.chainId, parentReceiptIds: [first.id], dagOrdinal: 1 })
  t.not(other.chainId, first.chainId, 'another connection, another chain')
  const chain = await fetch(`${gate.controlUrl}/v1/receipts/chain?receiptId=${second.id}`, { headers: { authorization: `Bearer ${CONTROL_TOKEN}` } })
  t.match(await chain.json(), { chainId: first.chainId, count: 2, verified: true })
})
