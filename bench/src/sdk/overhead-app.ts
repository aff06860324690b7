// One app of the SDK overhead benchmark, in its own process so the load generator does not share its
// event loop: argv = framework (express | fastify), gate (on | off), sidecar URL. GET /pets answers a
// small JSON list. Prints `listening PORT` once bound to 127.0.0.1, and `stats CPU_MICROS SERVED` on
// SIGUSR2 (process CPU time and requests answered so far: the load-independent cost per request).
import express from 'express'
import Fastify from 'fastify'
import { gate as expressGate } from '@gate/express'
import { gate as fastifyGate } from '@gate/fastify'

const [framework, withGate, sidecarUrl] = process.argv.slice(2)
if ((framework !== 'express' && framework !== 'fastify') || (withGate !== 'on' && withGate !== 'off') || sidecarUrl === undefined) {
  throw new Error('usage: overhead-app express|fastify on|off SIDECAR_URL')
}
const pets = { pets: [{ id: '1', name: 'Rex' }, { id: '2', name: 'Tom' }] }
let served = 0

let port: number
let close: () => Promise<void>
if (framework === 'express') {
  const app = express()
  const g = withGate === 'on' ? expressGate({ sidecarUrl }) : undefined
  if (g !== undefined) app.use(g)
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
  }
} else {
  const app = Fastify({ logger: false })
  if (withGate === 'on') await app.register(fastifyGate, { sidecarUrl })
  app.get('/pets', async () => {
    served++
    return pets
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as { port: number }).port
  close = () => app.close()
}
process.stdout.write(`listening ${port}\n`)
process.on('SIGUSR2', () => {
  const cpu = process.cpuUsage()
  process.stdout.write(`stats ${cpu.user + cpu.system} ${served}\n`)
})
process.on('SIGTERM', () => void close().then(() => process.exit(0)))
