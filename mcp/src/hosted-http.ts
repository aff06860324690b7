// The HTTP pieces of the hosted edge that come before the SDK transport: the answers it gives itself
// (JSON-RPC error bodies with the spec's statuses), the request checks (Accept, Content-Type, Host and
// Origin against DNS rebinding) and a body read with a byte limit.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isIP } from 'node:net'

/** The one protocol version the hosted edge speaks (spec 03, Versioning): exact match, no downgrade. */
export const HOSTED_PROTOCOL_VERSION = '2025-11-25'

/** spec 03's native incompatible-peer code, carried in `error.data.gateError` of a refused initialize. */
export const GATE_INCOMPATIBLE_PEER = 1000

export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  options: { id?: string | number | null; data?: unknown; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent) return void res.end()
  const error: Record<string, unknown> = { code, message }
  if (options.data !== undefined) error.data = options.data
  const body = JSON.stringify({ jsonrpc: '2.0', id: options.id ?? null, error })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers })
  res.end(body)
}

/** spec 03's 401: one `error` string and `www-authenticate: Bearer`, the same for absent and unknown tokens. */
export function sendUnauthorized(res: ServerResponse): void {
  const body = JSON.stringify({ error: 'missing or invalid bearer token: a session needs an admission token or JWT' })
  res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'www-authenticate': 'Bearer' })
  res.end(body)
}

export function acceptsPost(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('application/json') && accept.includes('text/event-stream')
}

export function acceptsStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream')
}

export function isJsonContentType(req: IncomingMessage): boolean {
  return /^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')
}

export type BodyRead = { ok: true; value: unknown } | { ok: false; status: 413 | 400; message: string }

/** Reads and parses the body; stops reading past `maxBytes` (a declared length over it is refused unread). */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const tooLarge = { ok: false as const, status: 413 as const, message: `Payload Too Large: the body must not exceed ${maxBytes} bytes` }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
    req.resume()
    return tooLarge
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      req.resume()
      return tooLarge
    }
    chunks.push(chunk as Buffer)
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) }
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON' }
  }
}

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1)
  const colon = hostHeader.lastIndexOf(':')
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon)
}

/**
 * Why a request is refused before anything else (403), or undefined. A browser page rebinding its name
 * to this host sends its own Origin and Host: on a loopback listener both must be loopback names unless
 * the operator allowed the origin; elsewhere a present Origin must be an allowed one.
 */
export function rebindingRefusal(req: IncomingMessage, loopback: boolean, allowedOrigins: ReadonlySet<string>): string | undefined {
  const origin = req.headers.origin
  if (origin !== undefined && !allowedOrigins.has(origin)) {
    let originHost: string | undefined
    try {
      originHost = new URL(origin).hostname
    } catch {
      originHost = undefined
    }
    if (!loopback || originHost === undefined || !isLoopbackHost(originHost)) return `Origin ${origin} is not allowed (--allow-origin)`
  }
  if (loopback && !isLoopbackHost(hostName(req.headers.host ?? ''))) return `Host ${req.headers.host ?? '(none)'} is not a loopback name`
  return undefined
}
