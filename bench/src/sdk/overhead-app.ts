// One app of the SDK overhead benchmark, in its own process so the load generator does not share its
// event loop: argv = framework (express | fastify), mode, URL, and for `on` the verifyReceipts mode.
//   off           no check at all (the bare app)
//   on URL [V]    Gate in front, sidecarUrl URL (http:// or unix:), verifyReceipts V (default local)
//   floor URL     the cheapest external check there is: one POST of a fixed body per request over the
//                 SDK's own transport to a bare node:http server that always answers the same allow
//                 (floor-server.ts), then on to the handler: what any sidecar design adds at least
// GET /pets answers a small JSON list. Prints `listening PORT` once bound to 127.0.0.1, and
// `stats CPU_MICROS SERVED` on SIGUSR2 (process CPU time and requests answered so far: the
// load-independent cost per request).
import express from 'express'
import Fastify from 'fastify'
import { gate as expressGate } from '@gate/express'
import { gate as fastifyGate } from '@gate/fastify'
import { createNodeTransport, resolveGateOptions, type SidecarTransport } from '@gate/sdk'

const [framework, mode, url, verify = 'local'] = process.argv.slice(2)
if ((framework !== 'express' && framework !== 'fastify') || (mode !== 'on' && mode !== 'off' && mode !== 'floor') || (mode !== 'off' && url === undefined)) {
  throw new Error('usage: overhead-app express|fastify off | on SIDECAR_URL [local|sidecar|off] | floor FLOOR_URL')
}
const pets = { pets: [{ id: '1', name: 'Rex' }, { id: '2', name: 'Tom' }] }
const gateOptions = { sidecarUrl: url as string, verifyReceipts: verify as 'local' | 'sidecar' | 'off' }
let served = 0

// the floor's check: the request a gated app would send, sent as is, and a 200 expected back
const FLOOR_HEADERS = Object.freeze({ 'content-type': 'application/json', accept: 'application/json' })
const FLOOR_BODY = JSON.stringify({
  request_id: '01900000-0000-7000-8000-000000000000',
  method: 'GET',
  route_pattern: '/pets',
  path: '/pets',
  caller: { subject: 'anonymous', auth_method: { method: 'anonymous' }, verified: false, tenant: null, agent_id: null },
  body_hash: null,
  body_length: 0,
  timestamp: 0,
})
const floor: SidecarTransport | undefined = mode === 'floor' ? createNodeTransport(resolveGateOptions({ sidecarUrl: url }, {})) : undefined
const askFloor = async (): Promise<boolean> => (await (floor as SidecarTransport).send('POST', '/gate/evaluate', FLOOR_HEADERS, FLOOR_BODY)).status === 200

let port: number
let close: () => Promise<void>
if (framework === 'express') {
  const app = express()
  const g = mode === 'on' ? expressGate(gateOptions) : undefined
  if (g !== undefined) app.use(g)
  if (floor !== undefined) app.use((_req, res, next) => void askFloor().then(ok => (ok ? next() : res.status(403).end()), next))
  app.get('/pets', (_req, res) => {
    served++
    res.json(pets)
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  port = (server.address() as { port: number }).port
  close = async () => {
    server.close()
    await g?.close()
    await floor?.close()
  }
} else {
  const app = Fastify({ logger: false })
  if (mode === 'on') await app.register(fastifyGate, gateOptions)
  if (floor !== undefined) {
    app.addHook('preParsing', async (_request, reply, payload) => {
      if (!(await askFloor())) return reply.code(403).send()
      return payload
    })
  }
  app.get('/pets', async () => {
    served++
    return pets
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as { port: number }).port
  close = async () => {
    await app.close()
    await floor?.close()
  }
}
process.stdout.write(`listening ${port}\n`)
process.on('SIGUSR2', () => {
  const cpu = process.cpuUsage()
  process.stdout.write(`stats ${cpu.user + cpu.system} ${served}\n`)
})
process.on('SIGTERM', () => void close().then(() => process.exit(0)))
