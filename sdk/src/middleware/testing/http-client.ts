// One HTTP call to an app under test, answer parsed as JSON when it is JSON. Test support only.
import { request } from 'undici'

export interface CallResult {
  status: number
  headers: Record<string, string>
  text: string
  json: any // eslint-disable-line @typescript-eslint/no-explicit-any -- test assertions read arbitrary members
}

export interface CallOptions {
  headers?: Record<string, string>
  body?: string | Uint8Array
}

/** Sends `method path` to `baseUrl` (a fresh connection per call, so servers close promptly). */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const res = await request(baseUrl + path, { method: method as 'GET', headers: { connection: 'close', ...options.headers }, body: options.body, reset: true })
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
}
