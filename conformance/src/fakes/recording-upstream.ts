// The upstream of a proxy under test (`gate api protect --upstream` pointed here): it answers every
// request 200 with a small JSON body and records what arrived exactly as received (raw target, raw
// header lines), so the proxy.* checks can say what was forwarded and what never was.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { UsageError } from '../errors.js'

/** One request as the upstream received it. */
export interface RecordedRequest {
  method: string
  /** The raw request target (path and query). */
  url: string
  /** Header names lower-cased, with every value sent under each. */
  headers: Map<string, string[]>
}

export interface RecordingUpstream {
  /** The base URL to give the proxy as its upstream. */
  url: string
  /** Every request received so far, oldest first. */
  readonly received: readonly RecordedRequest[]
  close(): Promise<void>
}

/** Largest body read from a forwarded request; the checks send none. */
const MAX_BODY_BYTES = 64 * 1024

/** Listens on `host:port` (port 0: a free one). A port in use is a UsageError. */
export async function startRecordingUpstream(listen: { host: string; port: number } = { host: '127.0.0.1', port: 0 }): Promise<RecordingUpstream> {
  const received: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    const headers = new Map<string, string[]>()
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase()
      headers.set(name, [...(headers.get(name) ?? []), req.rawHeaders[i + 1]!])
    }
    received.push({ method: req.method ?? '', url: req.url ?? '', headers })
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) req.destroy()
    })
    req.on('end', () => {
      const body = JSON.stringify({ upstream: 'gate-conformance', method: req.method, url: req.url })
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    })
  })
  server.on('connection', s => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.listen(listen.port, listen.host)
  try {
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))])
  } catch (err) {
    throw new UsageError(`the recording upstream cannot listen on ${listen.host}:${listen.port}: ${(err as Error).message}`, err)
  }
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    received,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise(resolve => server.close(() => resolve()))
    },
  }
}

/** Reads `HOST:PORT` (an IPv6 host in brackets) for --proxy-upstream; a UsageError otherwise. */
export function parseUpstreamAddress(text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text)
  const port = m === null ? NaN : Number(m[2])
  if (m === null || port > 65535) throw new UsageError(`--proxy-upstream must be HOST:PORT (the address the proxy under test forwards to), got "${text}"`)
  const host = m[1]!
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port }
}
