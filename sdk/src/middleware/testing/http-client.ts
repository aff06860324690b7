// One HTTP call to an app or sidecar under test, answer parsed as JSON when it is JSON; `baseUrl` is
// `http://…` or `unix:PATH`. Test support only.
import { request } from 'undici'
import { requestTarget } from './test-listen.js'

export interface CallResult {
  status: number
  headers: Record<string, string>
  text: string
  json: any // eslint-disable-line @typescript-eslint/no-explicit-any -- test assertions read arbitrary members
}

export interface CallOptions {
  /** A record, or flat field lines (`[name, value, name, value]`) to send a header more than once. */
  headers?: Record<string, string> | string[]
  body?: string | Uint8Array
}

/** Sends `method path` to `baseUrl` (a fresh connection per call, so servers close promptly). */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const { url, dispatcher } = requestTarget(baseUrl, path)
  try {
    const sent = Array.isArray(options.headers) ? ['connection', 'close', ...options.headers] : { connection: 'close', ...options.headers }
    const res = await request(url, { method: method as 'GET', headers: sent, body: options.body, reset: true, dispatcher })
    const text = await res.body.text()
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.statusCode, headers, text, json }
  } finally {
    await dispatcher?.close()
  }
}
