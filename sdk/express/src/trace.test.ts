// Issue 44: a request carrying `traceparent` through a real Express app with @gate/express to the real
// `gate sidecar` exporting OTLP/HTTP to a receiver in this test: one trace id, the sidecar's spans in
// parent-child order, the receipt id on the evaluation span and the trace id in the signed receipt.
import t from 'tap'
import express, { type Request, type Response } from 'express'
import { randomBytes } from 'node:crypto'
import { call, endsBefore, endsWithin, hasSidecarBuild, serveOnLoopback, startOtlpReceiver, startSidecarProcess, type ReceivedSpan } from '@gate/sdk/middleware-testing'
import { gate } from './index.js'

const SERVER = 2

function byName(spans: readonly ReceivedSpan[], traceId: string, name: string): ReceivedSpan | undefined {
  return spans.find(s => s.traceId === traceId && s.name === name)
}

t.test('a traceparent through Express and the sidecar yields one trace with the receipt on it', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const sidecar = await startSidecarProcess({
    dir: t.testdir(),
    // a short batch delay so spans leave at once; the test waits on the receiver, not on time
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_SERVICE_NAME: 'sidecar-under-test' },
  })
  t.teardown(() => sidecar.stop())
  const app = express()
  const g = gate({ sidecarUrl: sidecar.url })
  app.use(g)
  app.get('/pets', (req: Request, res: Response) => void res.json({ receipt: req.gate?.receipt ?? null }))
  const { url, close } = await serveOnLoopback(app, () => g.close())
  t.teardown(close)

  const traceId = randomBytes(16).toString('hex')
  const callerSpan = randomBytes(8).toString('hex')
  const res = await call(url, 'GET', '/pets', { headers: { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'vendor=1' } })
  t.equal(res.status, 200)
  const receipt = (res.json as { receipt: { id: string; metadata: Record<string, unknown> } }).receipt
  t.equal(receipt.metadata.gate_trace_id, traceId, 'the signed receipt names the trace')
  const verified = await sidecar.verify(receipt as never)
  t.ok(verified.signature_valid && verified.receipt_id_valid, 'the receipt with its trace id verifies')

  const spans = await receiver.waitFor(s => ['POST /gate/evaluate', 'gate.guards', 'gate.receipt.write'].every(n => byName(s, traceId, n) !== undefined))
  const server = byName(spans, traceId, 'POST /gate/evaluate') as ReceivedSpan
  const guards = byName(spans, traceId, 'gate.guards') as ReceivedSpan
  const write = byName(spans, traceId, 'gate.receipt.write') as ReceivedSpan
  t.equal(server.kind, SERVER)
  t.equal(server.service, 'sidecar-under-test')
  t.equal(server.parentSpanId, callerSpan, 'the evaluation continues the caller\'s span')
  t.match(server.attributes, { 'http.request.method': 'POST', 'http.route': '/gate/evaluate', 'http.response.status_code': 200, 'gate.receipt.id': receipt.id, 'gate.verdict': 'allow', 'gate.route': '/pets' })
  t.equal(guards.parentSpanId, server.spanId)
  t.equal(write.parentSpanId, server.spanId)
  t.equal(write.attributes['gate.receipt.id'], receipt.id)
  t.ok(endsBefore(guards, write), 'the guards run before the receipt is written')
  t.ok(endsWithin(write, server), 'the answer waits for the commit')
  t.ok(guards.events.some(e => e.name === 'gate.guard'), 'each guard that ran is an event')
  // written after the listening line, so certainly there once a span has been exported
  t.match(sidecar.output(), /traces: OTLP\/HTTP to http:\/\/127\.0\.0\.1:\d+\/v1\/traces as service\.name \\?"sidecar-under-test/)
})

t.test('without a traceparent the sidecar starts a trace and the receipt names it', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const sidecar = await startSidecarProcess({ dir: t.testdir(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' } })
  t.teardown(() => sidecar.stop())
  const app = express()
  const g = gate({ sidecarUrl: sidecar.url })
  app.use(g)
  app.post('/pets', (_req: Request, res: Response) => void res.json({}))
  const { url, close } = await serveOnLoopback(app, () => g.close())
  t.teardown(close)

  // no capability: a deny, whose receipt leads to its trace as well
  const res = await call(url, 'POST', '/pets', { headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(res.status, 403)
  const receiptId = res.headers['x-gate-receipt-id'] as string
  const spans = await receiver.waitFor(s => s.some(x => x.attributes['gate.receipt.id'] === receiptId && x.name === 'POST /gate/evaluate'))
  const server = spans.find(x => x.attributes['gate.receipt.id'] === receiptId && x.name === 'POST /gate/evaluate') as ReceivedSpan
  t.equal(server.parentSpanId, '', 'a root span')
  t.equal(server.attributes['gate.verdict'], 'deny')
  t.equal(server.service, 'gate sidecar', 'the default service.name')
  const guards = spans.find(x => x.traceId === server.traceId && x.name === 'gate.guards') as ReceivedSpan
  t.ok(typeof guards.attributes['gate.guard.denied_by'] === 'string', 'the guard that denied')
})
