// The floor of the sidecar and SDK benchmarks: a bare node:http server that reads the POST body and
// answers a canned JSON of the same size as an evaluate response. Run as its own process, like the
// sidecar: argv = the answer, and optionally `unix:PATH` to listen on a Unix socket (default a free
// loopback port). Prints `listening on URL`.
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'

const answer = process.argv[2] ?? '{}'
const where = process.argv[3]
const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', c => chunks.push(c as Buffer))
  req.on('end', () => {
    res.setHeader('content-type', 'application/json')
    res.setHeader('content-length', Buffer.byteLength(answer))
    res.end(answer)
  })
})
if (where?.startsWith('unix:')) {
  const path = where.slice('unix:'.length)
  rmSync(path, { force: true })
  server.listen(path, () => process.stdout.write(`listening on unix:${path}\n`))
} else {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number }
    process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`)
  })
}
process.on('SIGTERM', () => server.close(() => process.exit(0)))
