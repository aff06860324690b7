// The suite's only way onto the network: one undici Agent per run, every request bounded by a deadline
// (headers and body together) and every answer by a size cap, so a hanging or flooding sidecar cannot
// stall or exhaust the run.
import { Agent, request } from 'undici'

/** A request body: text, bytes, or chunks sent with Transfer-Encoding: chunked (no Content-Length). */
export type RequestBody = string | Uint8Array | AsyncIterable<Uint8Array>

export interface HttpRequest {
  method: string
  /** Path and query, starting with `/`. */
  path: string
  headers?: Record<string, string>
  body?: RequestBody
  /** Deadline for the whole exchange. Default: the client's. */
  timeoutMs?: number
}

export interface HttpAnswer {
  status: number
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>
  text: string
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown
}

/** The exchange did not produce an answer: connection refused or reset, or the deadline passed. */
export class HttpExchangeError extends Error {
  constructor(
    readonly kind: 'timeout' | 'connection',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options)
    this.name = 'HttpExchangeError'
  }
}

/** After this many timeouts in a row the sidecar is taken to hang and further requests fail at once. */
const TIMEOUTS_BEFORE_GIVING_UP = 3

/** Largest answer read; a sidecar answer is a few KiB. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024

export interface HttpClientOptions {
  baseUrl: string
  /** Default deadline per request. */
  timeoutMs: number
}

/** HTTP client bound to one base URL. */
export class HttpClient {
  readonly baseUrl: string
  readonly #timeoutMs: number
  readonly #agent: Agent
  #timeoutsInARow = 0

  constructor(options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#timeoutMs = options.timeoutMs
    // generous header size: the hostile-input checks send a 1 MiB header on purpose
    this.#agent = new Agent({ connections: 8, pipelining: 1, maxHeaderSize: 64 * 1024 })
  }

  async send(req: HttpRequest): Promise<HttpAnswer> {
    // bounded run: a sidecar that stopped answering costs three deadlines, not one per request
    if (this.#timeoutsInARow >= TIMEOUTS_BEFORE_GIVING_UP) {
      throw new HttpExchangeError('timeout', `${req.method} ${req.path}: not sent, the sidecar did not answer the last ${this.#timeoutsInARow} requests in time`)
    }
    const answer = await this.#exchange(req).catch((err: unknown) => {
      if (err instanceof HttpExchangeError && err.kind === 'timeout') this.#timeoutsInARow++
      throw err
    })
    this.#timeoutsInARow = 0
    return answer
  }

  async #exchange(req: HttpRequest): Promise<HttpAnswer> {
    const timeoutMs = req.timeoutMs ?? this.#timeoutMs
    const signal = AbortSignal.timeout(timeoutMs)
    const url = this.baseUrl + req.path
    try {
      const res = await request(url, {
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body as string | Uint8Array | undefined,
        dispatcher: this.#agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      })
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length
        if (size > MAX_ANSWER_BYTES) {
          res.body.destroy()
          throw new HttpExchangeError('connection', `${req.method} ${req.path}: answer larger than ${MAX_ANSWER_BYTES} bytes`)
        }
        chunks.push(chunk as Buffer)
      }
      const text = Buffer.concat(chunks).toString('utf8')
      return { status: res.statusCode, headers: flattenHeaders(res.headers), text, json: parseJson(text) }
    } catch (err) {
      if (err instanceof HttpExchangeError) throw err
      if (signal.aborted || isTimeout(err)) {
        throw new HttpExchangeError('timeout', `${req.method} ${req.path}: no complete answer within ${timeoutMs} ms`, { cause: err })
      }
      throw new HttpExchangeError('connection', `${req.method} ${req.path}: ${describe(err)}`, { cause: err })
    }
  }

  close(): Promise<void> {
    return this.#agent.destroy()
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
  return out
}

function parseJson(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || (err as Error | null)?.name === 'TimeoutError'
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null
  const code = e?.code ?? e?.cause?.code
  const message = typeof e?.message === 'string' ? e.message : String(err)
  return typeof code === 'string' ? `${code}: ${message}` : message
}
