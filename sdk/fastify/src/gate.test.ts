// @gate/fastify end to end: a real Fastify 5 app on 127.0.0.1:0 in front of the real `gate sidecar`
// (and the fake sidecar for faults the real one cannot produce).
import t from 'tap'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { fileURLToPath } from 'node:url'
import { call, hasSidecarBuild, runAdapterSuite, runExampleWalkthrough, startFakeSidecar, summarizeGate, type StartApp } from '@gate/sdk/middleware-testing'
import { gate } from './index.js'

const echo = async (request: FastifyRequest, reply: FastifyReply) => {
  return reply.send({ body: request.body ?? null, gate: summarizeGate(request.gate), query: { ...(request.query as object) }, capabilityHeader: request.headers['x-gate-capability'] ?? null })
}

// Fastify parses bodies after every preParsing hook, so 'before' and 'after' are the same app here:
// its content-type parser always runs after Gate.
const startApp: StartApp = async options => {
  const app = Fastify()
  await app.register(gate, options)
  app.get('/healthz', echo)
  app.get('/pets', echo)
  app.get('/pets/:id', echo)
  app.post('/pets', echo)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { url, close: () => app.close() }
}

await runAdapterSuite(t, 'fastify', startApp)
await runAdapterSuite(t, 'fastify', startApp, { transport: 'unix' })

t.test('registered at the root, the hook reaches routes in child scopes and sends their route pattern', async t => {
  const fake = await startFakeSidecar()
  t.teardown(() => fake.close())
  const app = Fastify()
  await app.register(gate, { sidecarUrl: fake.url })
  await app.register(async child => child.get('/items/:id', echo), { prefix: '/v2' })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const res = await call(url, 'GET', '/v2/items/3')
  t.equal(res.status, 200)
  t.equal(res.json.gate.verdict, 'allow')
  t.equal((fake.evaluations[0]!.body as { route_pattern: string }).route_pattern, '/v2/items/{id}')
})

t.test('a bad option fails at register, naming the option', async t => {
  const app = Fastify()
  await t.rejects(async () => app.register(gate, { timeoutMs: '5s' as never }).ready(), { code: 'gate_invalid_config', message: /timeoutMs must be a positive integer, got "5s"/ })
  await app.close().catch(() => undefined)
})

t.test('examples/fastify works as its README says', { skip: hasSidecarBuild() ? false : 'no sidecar build (run npm run build)' }, t =>
  runExampleWalkthrough(t, fileURLToPath(new URL('../../../examples/fastify/', import.meta.url))),
)
