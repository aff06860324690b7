// The no-policy Node reverse proxy of the benchmark: fastify + @fastify/http-proxy (undici underneath),
// in its own process. argv[2] is the upstream URL. Prints `listening PORT` once bound to 127.0.0.1.
import Fastify from 'fastify'
import proxy from '@fastify/http-proxy'

const upstream = process.argv[2]
if (upstream === undefined) throw new Error('usage: fastify-proxy UPSTREAM_URL')
const app = Fastify({ logger: false })
await app.register(proxy, { upstream, http2: false })
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : 0}\n`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
