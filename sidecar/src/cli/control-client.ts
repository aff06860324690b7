// Client side of the control routes for CLI subcommands: base URL from --control-url (default the
// local sidecar), bearer token from --control-token or GATE_CONTROL_TOKEN.
import { UsageError } from '../errors.js'
import type { GlobalFlags } from '../config/global-flags.js'

export const DEFAULT_CONTROL_URL = 'http://127.0.0.1:9090'

export interface ControlClient {
  post(path: string, body: unknown): Promise<unknown>
  get(path: string): Promise<unknown>
}

export function createControlClient(flags: GlobalFlags): ControlClient {
  let base: URL
  try {
    base = new URL(flags.controlUrl ?? DEFAULT_CONTROL_URL)
  } catch {
    throw new UsageError(`--control-url must be an http(s) URL, got "${flags.controlUrl}"`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`--control-url must be http or https, got ${base.protocol}`)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (flags.controlToken !== undefined) headers.authorization = `Bearer ${flags.controlToken}`
  const send = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const url = new URL(path, base)
    let res
    try {
      // imported here: most `gate` commands never talk to a control URL
      const { request } = await import('undici')
      res = await request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), headersTimeout: 15_000, bodyTimeout: 60_000 })
    } catch (err) {
      throw new Error(`cannot reach ${url.origin}: ${(err as Error).message}`)
    }
    const text = await res.body.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new Error(`${method} ${url.pathname} answered ${res.statusCode} with a non-JSON body`)
    }
    if (res.statusCode !== 200) {
      const message = (parsed as { error?: unknown; message?: unknown }).message ?? (parsed as { error?: unknown }).error
      throw new Error(`${method} ${url.pathname} answered ${res.statusCode}: ${String(message)}`)
    }
    return parsed
  }
  return { post: (p, b) => send('POST', p, b), get: p => send('GET', p) }
}
