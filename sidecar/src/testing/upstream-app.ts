// A real upstream API for the `gate api protect` end-to-end tests: node:http on 127.0.0.1:0, recording
// every request it receives exactly as received (raw headers, raw target, body bytes).
//
//   GET  /pets                  JSON list
//   POST /pets                  201, JSON echo of the request
//   *    /status/{code}         answers {code} with a small JSON body (error-status relay)
//   GET  /stream                writes "first\n", waits for release(), then writes "second\n" and ends
//   GET  /hang                  never answers (upstream timeout)
//   GET  /hang-body             sends headers and "partial\n", then never finishes
//   GET  /hop                   answers with hop-by-hop response headers the proxy must drop
//   any  /{document path}       a discovery document configured through `documents`; the four
//                               discovery paths answer 404 when none is configured
//   any  anything else          200 echo: method, raw target, raw headers, body as base64
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface ReceivedRequest {
  method: string
  /** The raw request target (path and query as received). */
  url: string
  rawHeaders: string[]
  /** Header names lower-cased, repeated values joined with ", ". */
  headers: Record<string, string>
  body: Buffer
}

export interface EchoBody {
  method: string
  url: string
  rawHeaders: string[]
  bodyBase64: string
  bodyLength: number
}

/** A canned answer for a path (discovery probes, redirects, oversized documents). */
export interface CannedAnswer {
  status: number
  headers?: Record<string, string>
  body?: string | Buffer
}

export interface UpstreamAppOptions {
  /** Exact raw targets answered with a canned response (e.g. '/openapi.json'). */
  documents?: Record<string, CannedAnswer>
}

export interface UpstreamApp {
  url: string
  port: number
  received: ReceivedRequest[]
  /** Resolves when /stream has written its first chunk. */
  streamStarted: Promise<void>
  /** Lets /stream finish. */
  releaseStream(): void
  /** Resolves with the next request whose raw target starts with `prefix`. */
  nextRequest(prefix: string): Promise<ReceivedRequest>
  close(): Promise<void>
}

export async function startUpstreamApp(options: UpstreamAppOptions = {}): Promise<UpstreamApp> {
  const received: ReceivedRequest[] = []
  const waiters: { prefix: string; resolve: (r: ReceivedRequest) => void }[] = []
  const sockets = new Set<Socket>()
  let markStarted!: () => void
  const streamStarted = new Promise<void>(resolve => (markStarted = resolve))
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, headers: joinHeaders(req), body: Buffer.concat(chunks) }
      received.push(r)
      for (let i = waiters.length - 1; i >= 0; i--) {
        const w = waiters[i] as (typeof waiters)[number]
        if (r.url.startsWith(w.prefix)) {
          waiters.splice(i, 1)
          w.resolve(r)
        }
      }
      answer(r, res)
    })
  })
  server.on('connection', s => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  function answer(r: ReceivedRequest, res: ServerResponse): void {
    const path = r.url.split('?')[0] as string
    const doc = options.documents?.[r.url]
    if (doc !== undefined) {
      res.writeHead(doc.status, doc.headers ?? {})
      res.end(doc.body ?? '')
      return
    }
    // the discovery probe paths answer 404 unless a document is configured for them
    if (DISCOVERY_PATHS.has(path)) return json(res, 404, { error: 'no document here' })
    const status = /^\/status\/(\d{3})$/.exec(path)
    if (status !== null) return json(res, Number(status[1]), { error: `upstream says ${status[1]}` })
    if (path === '/pets' && r.method === 'GET') return json(res, 200, [{ id: 1, name: 'Rex' }])
    if (path === '/pets' && r.method === 'POST') return json(res, 201, echo(r))
    if (path === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('first\n', () => markStarted())
      released.then(() => res.end('second\n'))
      return
    }
    if (path === '/hang') return // never answers; the proxy's wall clock must end it
    if (path === '/hang-body') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('partial\n')
      return
    }
    if (path === '/hop') {
      res.writeHead(200, {
        'content-type': 'text/plain',
        connection: 'x-upstream-private',
        'x-upstream-private': 'secret',
        'keep-alive': 'timeout=5',
        'proxy-authenticate': 'Basic',
        'x-kept': 'yes',
      })
      res.end('hop\n')
      return
    }
    json(res, 200, echo(r))
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    streamStarted,
    releaseStream: () => release(),
    nextRequest: prefix => new Promise(resolve => waiters.push({ prefix, resolve })),
    close: () =>
      new Promise<void>(resolve => {
        release()
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

const DISCOVERY_PATHS = new Set(['/openapi.json', '/openapi.yaml', '/swagger.json', '/api-docs'])

function echo(r: ReceivedRequest): EchoBody {
  return { method: r.method, url: r.url, rawHeaders: r.rawHeaders, bodyBase64: r.body.toString('base64'), bodyLength: r.body.length }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function joinHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const k = (req.rawHeaders[i] as string).toLowerCase()
    const v = req.rawHeaders[i + 1] as string
    out[k] = out[k] === undefined ? v : `${out[k]}, ${v}`
  }
  return out
}
