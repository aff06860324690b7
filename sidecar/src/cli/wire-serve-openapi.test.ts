// The native wire in front of an OpenAPI API (`gate wire serve --spec --upstream`): an NDJSON answer
// streams line by line as tool_call_chunk frames and ends `stream_complete`; an answer cut off
// mid-stream ends `incomplete` with the chunks received; any other answer is one `ok` value.
import t from 'tap'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WireClient } from '@gate/sdk/wire'
import { gateFiles } from '../testing/gate-files.js'
import { startWireServe } from '../testing/wire-serve.js'

const operation = (operationId: string, type: string) => ({ get: { operationId, responses: { '200': { description: 'ok', content: { [type]: { schema: { type: 'object' } } } } } } })
const SPEC = {
  openapi: '3.0.3',
  info: { title: 'events', version: '1.0.0' },
  paths: { '/events': operation('streamEvents', 'application/x-ndjson'), '/cut': operation('cutEvents', 'application/x-ndjson'), '/plain': operation('plain', 'application/json') },
}

function upstream(): Server {
  return createServer((req, res) => {
    if (req.url === '/plain') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    // the upstream dies mid-answer once the first lines are out: the chunked body never ends
    res.write('{"n":1}\n{"n":2}\n', () => (req.url === '/cut' ? res.socket?.destroy() : res.end('{"n":3}\n')))
  })
}

t.test('NDJSON answers stream as chunks; a cut stream is incomplete; other answers are one ok value', async t => {
  const files = await gateFiles(t)
  const api = upstream().listen(0, '127.0.0.1')
  await once(api, 'listening')
  t.teardown(() => api.close())
  const spec = join(files.dir, 'events.json')
  writeFileSync(spec, JSON.stringify(SPEC))
  const dir = mkdtempSync(join(tmpdir(), 'gate-wire-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = (api.address() as { port: number }).port
  const gate = await startWireServe(t, ['--listen', `unix:${join(dir, 'wire.sock')}`, '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--spec', spec, '--upstream', `http://127.0.0.1:${port}`, '--server-id', 'events'])
  const client = await WireClient.connect(join(dir, 'wire.sock'))
  t.teardown(() => client.close())
  // GET operations are session-allowed (spec 01): any token object is presented, none is needed
  const token = { id: 'cap-none' }

  const streamed = await client.callTool({ serverId: 'events', tool: 'streamEvents', capabilityToken: token })
  t.same(streamed.chunks, [{ n: 1 }, { n: 2 }, { n: 3 }])
  t.same(streamed.result, { status: 'stream_complete', total_chunks: 3 })
  t.match(streamed.receipt, { decision: { verdict: 'allow' }, tool_server: 'events', tool_name: 'streamEvents' })

  const cut = await client.callTool({ serverId: 'events', tool: 'cutEvents', capabilityToken: token })
  t.same(cut.chunks, [{ n: 1 }, { n: 2 }])
  t.match(cut.result, { status: 'incomplete', chunks_received: 2, reason: /the upstream request GET \/cut failed/ })
  t.match(cut.receipt, { decision: { verdict: 'incomplete' } })

  const plain = await client.callTool({ serverId: 'events', tool: 'plain', capabilityToken: token })
  t.match(plain.result, { status: 'ok', value: { structuredContent: { ok: true } } })
  t.same(plain.chunks, [])
  void gate
})
