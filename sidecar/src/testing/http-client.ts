// Minimal JSON-over-HTTP helpers for end-to-end tests (undici request; loopback only).
import { connect } from 'node:net'
import { request } from 'undici'
import { validate } from '@gate/schemas'

export interface JsonResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
  text: string
}

export async function call(
  url: string,
  options: { method?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string | string[]> } = {},
): Promise<JsonResponse> {
  // an array value sends the header once per element (hostile-header tests)
  const headers: Record<string, string | string[]> = { ...options.headers }
  let body: string | Buffer | undefined = options.rawBody
  if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  // one connection per call (`reset`): a test that blocks its event loop for longer than the server's
  // keep-alive timeout would otherwise send its next request on a socket the server already closed
  const res = await request(url, { method: (options.method ?? (body === undefined ? 'GET' : 'POST')) as 'GET', headers, body, reset: true })
  const text = await res.body.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text }
}

/** Asserts a value against a schema id and returns the error list (empty when valid). */
export function schemaErrors(id: string, value: unknown): string[] {
  const r = validate(id, value)
  return r.ok ? [] : r.errors
}

/**
 * Sends one request exactly as `head` (and `body`) spell it over a new connection and reads until the
 * server closes it: for requests a client library refuses to send, or that the server refuses before
 * reading them whole. A server answering early may reset the connection while the rest is still being
 * written; what it answered is still read. Status 0 means no status line came back.
 */
export function sendRawRequest(url: string, head: readonly string[], body = ''): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url)
  return new Promise(resolve => {
    const socket = connect(Number(port), hostname)
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    // EPIPE or ECONNRESET once the server has answered and closed: the answer is what counts
    socket.on('error', () => undefined)
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0), text }))
    socket.end(`${[...head, `host: ${hostname}:${port}`, `content-length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`)
  })
}
