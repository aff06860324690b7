// The egress contract of spec auto-discovery (spec 01: probes run "under an egress contract pinned to
// the upstream scheme and authority"; spec 03 names the rejections). The client is bound to the
// upstream origin, so nothing but that origin can ever be dialled: redirects are followed by hand and
// only when they stay on the same scheme and authority, at most `maxRedirects` times; a response
// larger than `maxResponseBytes` is cut off. Loopback and private addresses are allowed here on
// purpose: the pinned authority IS the operator-configured upstream, usually on loopback.
import { Client } from 'undici'
import { EgressDeniedError, ProtectError } from './errors.js'

export interface PinnedEgressOptions {
  maxRedirects: number
  maxResponseBytes: number
  /** Per request (each probe and each redirect hop), headers and body included. */
  timeoutMs: number
}

export const EGRESS_DEFAULTS: Readonly<PinnedEgressOptions> = Object.freeze({
  maxRedirects: 3,
  maxResponseBytes: 16 * 1024 * 1024,
  timeoutMs: 10_000,
})

export interface PinnedResponse {
  status: number
  body: Buffer
  /** The URL that answered, after same-origin redirects. */
  url: string
}

export class PinnedEgress {
  readonly #pin: URL
  readonly #client: Client
  readonly #options: PinnedEgressOptions

  constructor(origin: string, options: PinnedEgressOptions = EGRESS_DEFAULTS) {
    this.#pin = new URL(origin)
    this.#options = options
    this.#client = new Client(this.#pin.origin, { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })
  }

  /** GETs `url` (which must be on the pinned origin), following same-origin redirects. */
  async get(url: string): Promise<PinnedResponse> {
    let current = this.#check(url, url)
    for (let hop = 0; ; hop++) {
      const response = await this.#getOnce(current)
      if (response.status < 300 || response.status > 399 || response.location === undefined) {
        return { status: response.status, body: response.body, url: current.href }
      }
      if (hop >= this.#options.maxRedirects) {
        throw new EgressDeniedError('RedirectLimitExceeded', `more than ${this.#options.maxRedirects} redirects from ${url}`)
      }
      current = this.#check(new URL(response.location, current).href, response.location)
    }
  }

  close(): Promise<void> {
    return this.#client.close()
  }

  #check(href: string, shown: string): URL {
    let u: URL
    try {
      u = new URL(href)
    } catch {
      throw new EgressDeniedError('SchemeDenied', `not a URL: ${shown}`)
    }
    if (u.username !== '' || u.password !== '') throw new EgressDeniedError('UserinfoDenied', `credentials in ${redact(u)}`)
    if (u.protocol !== this.#pin.protocol) throw new EgressDeniedError('SchemeDenied', `${redact(u)} leaves the pinned scheme ${this.#pin.protocol.slice(0, -1)}`)
    if (u.host !== this.#pin.host) throw new EgressDeniedError('AuthorityDenied', `${redact(u)} leaves the pinned authority ${this.#pin.host}`)
    return u
  }

  async #getOnce(url: URL): Promise<{ status: number; body: Buffer; location: string | undefined }> {
    const { maxResponseBytes, timeoutMs } = this.#options
    let response
    try {
      response = await this.#client.request({ method: 'GET', path: `${url.pathname}${url.search}`, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json, application/yaml, text/yaml, */*' } })
    } catch (err) {
      throw new ProtectError('Upstream', `GET ${url.href} failed: ${describeError(err)}`, err)
    }
    const declared = Number(response.headers['content-length'])
    if (Number.isFinite(declared) && declared > maxResponseBytes) {
      response.body.destroy()
      throw new EgressDeniedError('ResponseTooLarge', `${url.href} declares ${declared} bytes (limit ${maxResponseBytes})`)
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length
        if (size > maxResponseBytes) {
          response.body.destroy()
          throw new EgressDeniedError('ResponseTooLarge', `${url.href} sent more than ${maxResponseBytes} bytes`)
        }
        chunks.push(chunk as Buffer)
      }
    } catch (err) {
      if (err instanceof EgressDeniedError) throw err
      throw new ProtectError('Upstream', `GET ${url.href} failed while reading the body: ${describeError(err)}`, err)
    }
    const location = response.headers.location
    return { status: response.statusCode, body: Buffer.concat(chunks, size), location: Array.isArray(location) ? location[0] : location }
  }
}

function redact(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname}`
}

function describeError(err: unknown): string {
  const e = err as Error & { code?: string }
  if (e.name === 'TimeoutError') return 'timed out'
  return e.code !== undefined ? `${e.code} ${e.message}` : e.message
}
