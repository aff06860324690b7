// Header rules of spec 01's forwarding: every request header goes upstream except the hop-by-hop ones
// (plus any header the Connection header names, RFC 9110 §7.6.1), `host`, `content-length`, and the
// Gate credentials `x-gate-capability` and `x-gate-execution-nonce`. Responses come back without their
// hop-by-hop headers. Runs on every request, so it walks `rawHeaders` once and allocates one array.
//
// Documented additions (docs/security.md): the client's `Forwarded`, `X-Forwarded-*` and `X-Real-IP`
// are dropped and Gate sets its own X-Forwarded-For/-Host/-Proto (an upstream that trusts them must
// learn the address Gate saw, not one the client wrote); headers that name another path, method or
// host to route on (IIS, Symfony, nginx, Envoy) are dropped, since Gate decided on the request line
// and Host it saw; every `X-Gate-*` is dropped (the proxy sets none on the way up, so any is a
// client's claim an upstream might take for Gate's word); method-override headers never get here
// (the proxy refuses the request).
import type { IncomingMessage } from 'node:http'

/** RFC 9110 §7.6.1 hop-by-hop headers, plus the legacy `proxy-connection` (spec 01's list). */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

const DROPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP_HEADERS,
  'host',
  'content-length',
  // x-gate-capability and x-gate-execution-nonce (spec 01's list) fall under every `x-gate-*`, below
  // The proxy has already answered `100 Continue` and read the whole body, so the expectation is met;
  // undici also refuses to send it (NotSupportedError). Not in spec 01's list: a documented addition.
  'expect',
  // client-written forwarding claims (and every x-forwarded-*, below): Gate sets its own
  'forwarded',
  'x-real-ip',
  // another request line or host, claimed by the client: Gate decided on the one it saw
  'x-original-url',
  'x-original-uri',
  'x-rewrite-url',
  'x-original-method',
  'x-original-host',
  'x-envoy-original-path',
  'x-host',
  'x-http-host-override',
])

const GATE_PREFIX = 'x-gate-'
const FORWARDED_PREFIX = 'x-forwarded-'

/**
 * The request headers to send upstream, as undici's flat [name, value, ...] array, names in their
 * original case and order. `connection` is the request's Connection header value, if any.
 */
export function selectRequestHeaders(rawHeaders: readonly string[], connection: string | undefined): string[] {
  const named = connection === undefined ? undefined : connectionTokens(connection)
  const out: string[] = []
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    const lower = name.toLowerCase()
    if (DROPPED_REQUEST_HEADERS.has(lower) || named?.has(lower) === true || lower.startsWith(FORWARDED_PREFIX) || lower.startsWith(GATE_PREFIX)) continue
    out.push(name, rawHeaders[i + 1] as string)
  }
  return out
}

/** The forwarding headers Gate sets itself, as a flat [name, value, ...] array: the peer it saw. */
export function forwardedHeaders(req: Pick<IncomingMessage, 'socket' | 'headers'>): string[] {
  const out = ['x-forwarded-proto', (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http']
  const peer = req.socket.remoteAddress
  if (peer !== undefined) out.push('x-forwarded-for', peer)
  const host = req.headers.host
  if (typeof host === 'string' && host !== '') out.push('x-forwarded-host', host)
  return out
}

/** The upstream response headers to relay: everything except hop-by-hop and Connection-named ones. */
export function selectResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const connection = headers.connection
  const named = connection === undefined ? undefined : connectionTokens(Array.isArray(connection) ? connection.join(',') : connection)
  // null prototype: an upstream header named `__proto__` stays a header
  const out = Object.create(null) as Record<string, string | string[]>
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined || HOP_BY_HOP_HEADERS.has(name) || named?.has(name) === true) continue
    out[name] = value
  }
  return out
}

function connectionTokens(value: string): Set<string> {
  const set = new Set<string>()
  for (const token of value.split(',')) {
    const t = token.trim().toLowerCase()
    if (t !== '') set.add(t)
  }
  return set
}
