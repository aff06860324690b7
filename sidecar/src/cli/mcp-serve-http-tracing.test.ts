// Issue 44: an MCP tool call carrying `_meta.traceparent` (the MCP community's convention) through the
// real `gate mcp serve-http` to an OpenAPI API (a real node:http upstream), the process exporting
// OTLP/HTTP to a receiver in this test: one trace from the agent to the API, the spans in
// parent-child order, the receipt id on the spans and the trace id in the signed receipt.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createSigner, verifyCoreReceipt, type CoreReceipt } from '@gate/sdk'
import { endsBefore, startOtlpReceiver, type ReceivedSpan } from '@gate/sdk/middleware-testing'
import { gateFiles } from '../testing/gate-files.js'
import { startGateMcpHttp } from '../testing/mcp-http-session.js'
import { startGateMcp } from '../testing/mcp-session.js'
import { runGate } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'

const INTERNAL = 1
const SERVER = 2
const CLIENT = 3

const SPEC = `openapi: 3.1.0
info: { title: Pets, version: 1.0.0 }
paths:
  /pets:
    get:
      operationId: listPets
      responses: { '200': { description: ok } }
`

t.test('a tools/call with _meta.traceparent is one trace from the agent through the edge to the API', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const files = await gateFiles(t)
  const spec = join(files.dir, 'tools.yaml')
  writeFileSync(spec, SPEC)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--spec', spec, '--upstream', upstream.url], {
    env: { GATE_CONTROL_TOKEN: 'control-token-for-tracing-tests', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_SERVICE_NAME: 'edge-under-test' },
  })
  const { client } = await gate.connect()

  const traceId = randomBytes(16).toString('hex')
  const agentSpan = randomBytes(8).toString('hex')
  const received = upstream.nextRequest('/pets')
  const result = (await client.callTool({ name: 'listPets', arguments: {}, _meta: { traceparent: `00-${traceId}-${agentSpan}-01` } })) as CallToolResult
  t.notOk(result.isError)
  const receiptId = (result._meta as { gate: { receipt_id: string } }).gate.receipt_id
  const upstreamParent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec((await received).headers.traceparent ?? '')
  t.equal(upstreamParent?.[1], traceId, 'the API gets the agent\'s trace in traceparent')

  const spans = await receiver.waitFor(s => {
    const mine = s.filter(x => x.traceId === traceId)
    return mine.some(x => x.kind === SERVER) && mine.some(x => x.kind === CLIENT) && ['gate.evaluate', 'gate.guards', 'gate.receipt.write'].every(n => mine.some(x => x.name === n))
  })
  const mine = spans.filter(x => x.traceId === traceId)
  const server = mine.find(x => x.kind === SERVER) as ReceivedSpan
  const evaluate = mine.find(x => x.name === 'gate.evaluate') as ReceivedSpan
  const hop = mine.find(x => x.kind === CLIENT) as ReceivedSpan
  t.equal(server.name, 'tools/call listPets')
  t.equal(server.service, 'edge-under-test')
  t.equal(server.parentSpanId, agentSpan, 'the edge continues the agent\'s span')
  t.match(server.attributes, { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'listPets', 'rpc.system': 'jsonrpc', 'gate.receipt.id': receiptId, 'gate.verdict': 'allow' })
  t.equal(evaluate.kind, INTERNAL)
  t.equal(evaluate.parentSpanId, server.spanId)
  t.equal(evaluate.attributes['gate.receipt.id'], receiptId)
  t.equal((mine.find(x => x.name === 'gate.guards') as ReceivedSpan).parentSpanId, evaluate.spanId)
  t.equal((mine.find(x => x.name === 'gate.receipt.write') as ReceivedSpan).parentSpanId, evaluate.spanId)
  t.equal(hop.name, 'tools/call listPets')
  t.equal(hop.parentSpanId, server.spanId)
  t.equal(upstreamParent?.[2], hop.spanId, 'the API\'s parent is the hop to it')
  t.ok(endsBefore(evaluate, hop), 'decided and receipted before the tool server sees the call')

  const r = await runGate(['receipt', 'list', '--receipt-db', files.db, '--admin-all', '--tool-name', 'listPets'])
  t.equal(r.code, 0, r.stderr)
  const receipts = r.stdout.trim().split('\n').filter(Boolean).map(line => JSON.parse(line) as CoreReceipt)
  const receipt = receipts.find(x => x.id === receiptId)
  t.equal(receipt?.metadata?.gate_trace_id, traceId, 'the signed receipt names the trace')
  const key = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') }).publicKey
  t.ok(verifyCoreReceipt(receipt, { trustedKeys: [key] }).signature_valid, 'and verifies')
})

t.test('a wrapped MCP server gets the hop\'s traceparent in the tools/call _meta', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { GATE_CONTROL_TOKEN: 'control-token-for-tracing-tests', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' },
  })
  const { client } = await gate.connect()
  const traceId = randomBytes(16).toString('hex')
  const agentSpan = randomBytes(8).toString('hex')
  const result = (await client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: `00-${traceId}-${agentSpan}-01` } })) as CallToolResult
  t.notOk(result.isError)
  const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String((result._meta as { received_traceparent?: unknown }).received_traceparent))
  t.equal(sent?.[1], traceId, 'the wrapped server is in the agent\'s trace')
  t.not(sent?.[2], agentSpan, 'its parent is Gate\'s hop, not the agent')
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === traceId && x.kind === CLIENT))
  const hop = spans.find(x => x.traceId === traceId && x.kind === CLIENT) as ReceivedSpan
  t.equal(sent?.[2], hop.spanId)
  t.equal(hop.attributes['gate.tool_server.kind'], 'mcp')
})

t.test('gate mcp serve (stdio) traces a tools/call the same way', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const files = await gateFiles(t)
  const gate = await startGateMcp(t, ['--allow-ephemeral-receipts', '--authority-seed-file', files.seed, '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH], {
    env: { GATE_CONTROL_TOKEN: 'control-token-for-tracing-tests', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' },
  })
  const traceId = randomBytes(16).toString('hex')
  const agentSpan = randomBytes(8).toString('hex')
  const result = (await gate.client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: `00-${traceId}-${agentSpan}-01` } })) as CallToolResult
  const receiptId = (result._meta as { gate: { receipt_id: string } }).gate.receipt_id
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === traceId && x.kind === SERVER) && s.some(x => x.traceId === traceId && x.kind === CLIENT))
  const server = spans.find(x => x.traceId === traceId && x.kind === SERVER) as ReceivedSpan
  t.equal(server.parentSpanId, agentSpan)
  t.equal(server.attributes['gate.receipt.id'], receiptId)
  t.equal(server.service, 'gate mcp serve', 'the default service.name')
  t.match(String((result._meta as { received_traceparent?: unknown }).received_traceparent), new RegExp(`^00-${traceId}-`))
})
