// @gate/express end to end: a real Express 5 app on 127.0.0.1:0 in front of the real `gate sidecar`
// (and the fake sidecar for faults the real one cannot produce).
import t from 'tap'
import express, { type Request, type Response } from 'express'
import { fileURLToPath } from 'node:url'
import { call, hasSidecarBuild, runAdapterSuite, runExampleWalkthrough, serveOnLoopback, startFakeSidecar, summarizeGate, type StartApp } from '@gate/sdk/middleware-testing'
import { captureRawBody, gate } from './index.js'

const echo = (req: Request, res: Response) => {
  res.json({ body: req.body ?? null, gate: summarizeGate(req.gate), query: { ...req.query }, capabilityHeader: req.headers['x-gate-capability'] ?? null })
}

const startApp: StartApp = async (options, parser) => {
  const app = express()
  const g = gate(options)
  if (parser === 'before') app.use(express.json({ verify: captureRawBody }))
  app.use(g)
  if (parser === 'after') app.use(express.json())
  app.get('/healthz', echo)
  app.get('/pets', echo)
  app.get('/pets/:id', echo)
  app.post('/pets', echo)
  return serveOnLoopback(app, () => g.close())
}

await runAdapterSuite(t, 'express', startApp)
await runAdapterSuite(t, 'express', startApp, { transport: 'unix' })

t.test('per-route use sends the route pattern as /items/{id}', async t => {
  const fake = await startFakeSidecar()
  t.teardown(() => fake.close())
  const app = express()
  const g = gate({ sidecarUrl: fake.url })
  app.get('/items/:id', g, echo)
  const { url, close } = await serveOnLoopback(app, () => g.close())
  t.teardown(close)
  t.equal((await call(url, 'GET', '/items/9')).status, 200)
  t.equal((fake.evaluations[0]!.body as { route_pattern: string }).route_pattern, '/items/{id}')
})

t.test('a parser before Gate without captureRawBody fails closed with 500', async t => {
  const fake = await startFakeSidecar()
  t.teardown(() => fake.close())
  const app = express()
  const g = gate({ sidecarUrl: fake.url })
  app.use(express.json(), g)
  app.post('/pets', echo)
  const { url, close } = await serveOnLoopback(app, () => g.close())
  t.teardown(close)
  const res = await call(url, 'POST', '/pets', { headers: { 'content-type': 'application/json', 'x-gate-capability': '{}' }, body: '{"a":1}' })
  t.equal(res.status, 500)
  t.equal(res.json.error, 'gate_evaluation_failed')
  t.equal(fake.evaluations.length, 0)
})

t.test('examples/express works as its README says', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, t =>
  runExampleWalkthrough(t, fileURLToPath(new URL('../../../examples/express/', import.meta.url))),
)
