// The floor of the sidecar benchmark: a bare node:http server that reads the POST body and answers a
// canned JSON of the same size as an evaluate response. Run as its own process, like the sidecar.
import { createServer } from 'node:http'

const answer = process.argv[2] ?? '{}'
const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', c => chunks.push(c as Buffer))
  req.on('end', () => {
    res.setHeader('content-type', 'application/json')
    res.setHeader('content-length', Buffer.byteLength(answer))
    res.end(answer)
  })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number }
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
