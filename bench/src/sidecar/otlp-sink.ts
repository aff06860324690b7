// An OTLP/HTTP endpoint for the tracing row: accepts every export, reads it whole and answers 200, so
// the traced sidecar pays the export's full cost (serializing, sending) and nothing stalls on the sink.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export async function startOtlpSink(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0
  const server = createServer((req, res) => {
    req.resume()
    req.once('end', () => {
      exports++
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}
