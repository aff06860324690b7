// The upstream of the proxy benchmark, run as its own process so it does not share an event loop with
// the proxies or the load generator: GET answers a small JSON document, POST reads the body and
// answers a small JSON document. Prints `listening PORT` once bound to 127.0.0.1.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const ITEMS = JSON.stringify([{ id: 1, name: 'first' }, { id: 2, name: 'second' }])
const CREATED = JSON.stringify({ id: 3, created: true })

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ITEMS) })
    res.end(ITEMS)
    return
  }
  req.resume()
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(CREATED) })
    res.end(CREATED)
  })
})
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
