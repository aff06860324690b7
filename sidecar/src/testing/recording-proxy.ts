// A loopback HTTP proxy for fleet tests that records what a sidecar asks trust-control and what it was
// answered: each request's method and path (query included) and the status it got (0 when the upstream
// could not be reached). It forwards everything unchanged, held feed requests included, so the exchange
// is the real one; a test reads the log to see how the client behaved (a retry's parameters, its order).
import { once } from 'node:events'
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One forwarded exchange. */
export interface RecordedExchange {
  method: string
  /** Path and query, as the client sent them. */
  path: string
  /** The upstream's status; 0 when it could not be reached (the client got 502). */
  status: number
}

export interface RecordingProxy {
  url: string
  /** Every exchange answered so far, in the order the answers went out. */
  readonly log: readonly RecordedExchange[]
  /** Resolves with the first answered exchange (now or later) that `match` accepts. */
  waitFor(match: (exchange: RecordedExchange) => boolean): Promise<RecordedExchange>
  close(): Promise<void>
}

/** Starts a proxy on 127.0.0.1 forwarding to `target` (an http:// origin). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target)
  const log: RecordedExchange[] = []
  const waiters = new Set<{ match: (e: RecordedExchange) => boolean; resolve: (e: RecordedExchange) => void }>()
  const record = (exchange: RecordedExchange) => {
    log.push(exchange)
    for (const waiter of waiters) {
      if (!waiter.match(exchange)) continue
      waiters.delete(waiter)
      waiter.resolve(exchange)
    }
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/'
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers }, answer => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
      answer.once('end', () => record({ method: req.method ?? 'GET', path, status: answer.statusCode ?? 0 }))
    })
    forwarded.once('error', () => {
      record({ method: req.method ?? 'GET', path, status: 0 })
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' })
      res.end('{"error":"upstream unreachable"}')
    })
    // a client that gives up ends the forwarded request too
    res.once('close', () => forwarded.destroy())
    req.pipe(forwarded)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    waitFor(match) {
      const found = log.find(match)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise(resolve => waiters.add({ match, resolve }))
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
