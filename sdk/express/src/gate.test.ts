// @gate/express end to end: a real Express 5 app on 127.0.0.1:0 in front of the real `gate sidecar`
// (and the fake sidecar for faults the real one cannot produce).
import t from 'tap'
import express, { type Request, type Response } from 'express'
import { fileURLToPath } from 'node:url'
import { call, hasSidecarBuild, runAdapterSuite, runExampleWalkthrough, serveOnLoopback, startFakeSidecar, startSidecarProcess, summarizeGate, type StartApp } from '@gate/sdk/middleware-testing'
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

// Issue 24, item 2: Express serves HEAD with the GET handler and routes case-insensitively, so both
// reached a deny-by-default GET handler when the sidecar decided them by the method rule.
t.test('HEAD and letter case never reach a deny-by-default GET handler; a method override is refused', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, async t => {
  const sidecar = await startSidecarProcess({ dir: t.testdir() })
  t.teardown(() => sidecar.stop())
  const app = express()
  const g = gate({ sidecarUrl: sidecar.url })
  const hits: string[] = []
  app.use(g)
  app.get('/admin/export', (req, res) => {
    hits.push(`${req.method} ${req.path}`)
    res.json({ exported: true })
  })
  app.post('/pets/search', (req, res) => {
    hits.push(`${req.method} ${req.path}`)
    res.json([])
  })
  const { url, close } = await serveOnLoopback(app, () => g.close())
  t.teardown(close)
  for (const [method, path] of [['GET', '/admin/export'], ['HEAD', '/admin/export'], ['GET', '/ADMIN/EXPORT'], ['HEAD', '/Admin/Export']] as const) {
    t.equal((await call(url, method, path)).status, 403, `${method} ${path}: 403`)
  }
  t.same(hits, [], 'the handler never ran')
  const override = await call(url, 'POST', '/pets/search', { headers: { 'x-http-method-override': 'DELETE' } })
  t.equal(override.status, 400)
  t.match(override.json, { error: 'gate_bad_request', message: /method override \(x-http-method-override header\) is refused/ })
  t.equal((await call(url, 'POST', '/pets/search?_method=DELETE')).status, 400, '_method in the query too')
  t.same(hits, [])
  // with a capability for the operation, Express does route both spellings to the handler
  const { token } = await sidecar.issue(['exportAll'])
  for (const [method, path] of [['HEAD', '/admin/export'], ['GET', '/ADMIN/EXPORT']] as const) {
    t.equal((await call(url, method, path, { headers: { 'x-gate-capability': token } })).status, 200, `${method} ${path} with the token: 200`)
  }
  t.same(hits, ['HEAD /admin/export', 'GET /ADMIN/EXPORT'])
})

t.test('examples/express works as its README says', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, t =>
  runExampleWalkthrough(t, fileURLToPath(new URL('../../../examples/express/', import.meta.url))),
)
