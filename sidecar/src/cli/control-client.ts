// Client side of the control routes for CLI subcommands: base URL from --control-url (default the
// local sidecar), bearer token from GATE_CONTROL_TOKEN, else --control-token, else --control-token-file,
// else the file a sidecar started in this directory keeps it in (.gate/control-token), if there is
// one. Plain node:http(s): a CLI call makes one request, and loading undici's ~110 modules took longer
// than the request itself.
import { existsSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { EXACT_JSON_LIMITS, readJson } from '@gate/sdk'
import { UsageError } from '../errors.js'
import type { GlobalFlags } from '../config/global-flags.js'
import { DEFAULT_CONTROL_TOKEN_FILE, readTokenText } from '../config/control-token.js'

const DEFAULT_CONTROL_URL = 'http://127.0.0.1:9090'

/** Options of `createControlClient`. */
export interface ControlClientOptions {
  /** How long to wait for the answer's headers. Default 15,000 ms. */
  headersTimeoutMs: number
  /** How long the answer's body may stall between chunks. Default 60,000 ms. */
  bodyTimeoutMs: number
  /** The largest answer read; a longer one is refused. Default 64 MiB (a receipt page is far smaller). */
  maxResponseBytes: number
  /** The token file read when no token is given, if it exists. Default `.gate/control-token`. */
  defaultTokenFile: string
}

const CONTROL_CLIENT_DEFAULTS: Readonly<ControlClientOptions> = Object.freeze({
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 60_000,
  maxResponseBytes: 64 * 1024 * 1024,
  defaultTokenFile: DEFAULT_CONTROL_TOKEN_FILE,
})

/** An answer as received: its status and its body text. */
export interface ControlAnswer {
  status: number
  text: string
}

export interface ControlClient {
  /** POSTs `body` as JSON; resolves to the parsed answer when it is 200, otherwise throws its message. */
  post(path: string, body: unknown): Promise<unknown>
  /** GETs `path`; resolves to the parsed answer when it is 200, otherwise throws its message. */
  get(path: string): Promise<unknown>
  /** GETs `path` and resolves to the answer as received, whatever its status. */
  getText(path: string): Promise<ControlAnswer>
}

/** What a 401 answer adds: every way to give the token. */
export const UNAUTHORIZED_HINT =
  'give the control token: GATE_CONTROL_TOKEN, --control-token TOKEN, or --control-token-file PATH (the file gate sidecar / gate api protect printed at start; .gate/control-token in this directory is read by default)'

/** The token the client sends, in the order of the module comment; undefined when there is none. */
export function resolveClientControlToken(flags: GlobalFlags, defaultFile: string): string | undefined {
  if (flags.controlToken !== undefined) return flags.controlToken
  if (flags.controlTokenFile !== undefined) return readTokenText(flags.controlTokenFile)
  return existsSync(defaultFile) ? readTokenText(defaultFile) : undefined
}

/** An error message for a non-200 answer, with the ways out of a 401. */
export function describeRefusal(what: string, status: number, message: string): string {
  return `${what} answered ${status}: ${message}${status === 401 ? `; ${UNAUTHORIZED_HINT}` : ''}`
}

export function createControlClient(flags: GlobalFlags, options: Partial<ControlClientOptions> = {}): ControlClient {
  const resolved = { ...CONTROL_CLIENT_DEFAULTS, ...options }
  let base: URL
  try {
    base = new URL(flags.controlUrl ?? DEFAULT_CONTROL_URL)
  } catch {
    throw new UsageError(`--control-url must be an http(s) URL, got "${flags.controlUrl}"`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`--control-url must be http or https, got ${base.protocol}`)
  const headers: Record<string, string> = { accept: 'application/json' }
  const token = resolveClientControlToken(flags, resolved.defaultTokenFile)
  if (token !== undefined) headers.authorization = `Bearer ${token}`

  // A --control-url with a path (trust-control mounted under a prefix behind a reverse proxy) keeps
  // it: `new URL('/v1/…', base)` alone would drop it.
  const prefix = base.pathname.replace(/\/+$/, '')
  const urlOf = (path: string) => new URL(prefix + path, base)

  const exchange = async (method: 'GET' | 'POST', url: URL, body?: unknown): Promise<ControlAnswer> => {
    try {
      return await requestText(url, method, headers, body === undefined ? undefined : JSON.stringify(body), resolved)
    } catch (err) {
      throw new Error(`cannot reach ${url.origin}: ${(err as Error).message}`)
    }
  }
  const json = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const url = urlOf(path)
    const { status, text } = await exchange(method, url, body)
    const { pathname } = url
    let parsed: unknown
    try {
      parsed = readJson(text, EXACT_JSON_LIMITS).value
    } catch {
      throw new Error(`${method} ${pathname} answered ${status} with a non-JSON body`)
    }
    if (status !== 200) {
      const message = (parsed as { message?: unknown } | null)?.message ?? (parsed as { error?: unknown } | null)?.error
      throw new Error(describeRefusal(`${method} ${pathname}`, status, String(message)))
    }
    return parsed
  }
  return { post: (p, b) => json('POST', p, b), get: p => json('GET', p), getText: p => exchange('GET', urlOf(p)) }
}

/** One request on its own connection (no keep-alive: a CLI process must not wait on an idle socket). */
function requestText(url: URL, method: string, headers: Record<string, string>, body: string | undefined, options: ControlClientOptions): Promise<ControlAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const sentHeaders = body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
  return new Promise<ControlAnswer>((resolve, reject) => {
    const req = send(url, { method, headers: sentHeaders, agent: false })
    const fail = (err: Error) => {
      req.destroy()
      reject(err)
    }
    // one idle timer on the socket: headers first, then the body's chunks
    let answered = false
    req.on('timeout', () =>
      fail(new Error(answered ? `the answer stalled for ${options.bodyTimeoutMs} ms` : `no answer within ${options.headersTimeoutMs} ms`)),
    )
    req.setTimeout(options.headersTimeoutMs)
    req.once('error', fail)
    req.once('response', (res: IncomingMessage) => {
      answered = true
      req.setTimeout(options.bodyTimeoutMs)
      const chunks: Buffer[] = []
      let length = 0
      res.on('data', (chunk: Buffer) => {
        length += chunk.length
        if (length > options.maxResponseBytes) return fail(new Error(`the answer is longer than ${options.maxResponseBytes} bytes`))
        chunks.push(chunk)
      })
      res.once('error', fail)
      res.once('close', () => {
        if (!res.complete) fail(new Error('the connection closed before the answer was complete'))
      })
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
    })
    req.end(body)
  })
}
