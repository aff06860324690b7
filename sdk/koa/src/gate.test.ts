// @gate/koa end to end: a real Koa 3 app on 127.0.0.1:0 in front of the real `gate sidecar` (and the
// fake sidecar for faults the real one cannot produce).
import t from 'tap'
import Koa from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { fileURLToPath } from 'node:url'
import { call, hasSidecarBuild, runAdapterSuite, runExampleWalkthrough, serveOnLoopback, startFakeSidecar, summarizeGate, type StartApp } from '@gate/sdk/middleware-testing'
import { gate } from './index.js'

const echo: Koa.Middleware = ctx => {
  ctx.body = {
    body: (ctx.request as { body?: unknown }).body ?? null,
    gate: summarizeGate(ctx.state.gate),
    query: { ...ctx.query },
    capabilityHeader: ctx.get('x-gate-capability') || null,
  }
}

const startApp: StartApp = async (options, parser) => {
  const app = new Koa()
  const g = gate(options)
  if (parser === 'before') app.use(bodyParser())
  app.use(g)
  if (parser === 'after') app.use(bodyParser())
  app.use(echo)
  return serveOnLoopback(app.callback(), () => g.close())
}

await runAdapterSuite(t, 'koa', startApp)
await runAdapterSuite(t, 'koa', startApp, { transport: 'unix' })

t.test('a parser before Gate: the hash covers the raw bytes it kept', async t => {
  const fake = await startFakeSidecar()
  t.teardown(() => fake.close())
  const before = await startApp({ sidecarUrl: fake.url }, 'before')
  t.teardown(() => before.close())
  const after = await startApp({ sidecarUrl: fake.url }, 'after')
  t.teardown(() => after.close())
  const body = '{"name":"Rex","n":"ü"}'
  for (const url of [before.url, after.url]) {
    const res = await call(url, 'POST', '/pets', { headers: { 'content-type': 'application/json', 'x-gate-capability': '{}' }, body })
    t.same(res.json.body, JSON.parse(body))
  }
  const [a, b] = fake.evaluations.map(e => (e.body as { body_hash: string }).body_hash)
  t.equal(a, b, 'same body hash whichever side the parser is on')
})

t.test('examples/koa works as its README says', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, t =>
  runExampleWalkthrough(t, fileURLToPath(new URL('../../../examples/koa/', import.meta.url))),
)
