// The sidecar's connection to trust-control: keep-alive HTTP(S) with the fleet's control token, the
// private CA of --control-ca, a deadline on every request and a bounded answer, checked against its
// fleet schema (gate.fleet.*, @gate/trust's fleet-messages.ts) before anyone reads it. Every fleet module
// (authority follower, revocation mirror, key enrolment, receipt outbox, remote budgets) talks through it.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { EXACT_JSON_LIMITS, readJson } from '@gate/sdk'
import { readFleetMessage, type FleetMessages } from '@gate/trust'
import { StoreUnavailableError } from '../errors.js'

/** Largest answer read (a revocation page of 1,000 entries is ~100 KB). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024

export interface ControlConnectionOptions {
  url: URL
  token: string
  ca: string | undefined
}

/** A parsed answer with its status. */
export interface ControlReply {
  status: number
  body: unknown
}

/** Trust-control could not be reached or answered nothing usable (fail closed where it matters). */
export class ControlUnreachableError extends StoreUnavailableError {
  constructor(location: string, detail: string, cause?: unknown) {
    super('trust-control', location, detail, cause)
    this.name = 'ControlUnreachableError'
  }
}

/** A refusal by trust-control (a non-200 answer), with its status and message. */
export class ControlRefusedError extends StoreUnavailableError {
  /** trust-control's HTTP status. */
  readonly answerStatus: number
  constructor(location: string, status: number, message: string) {
    super('trust-control', location, `answered ${status}: ${message}`)
    this.name = 'ControlRefusedError'
    this.answerStatus = status
  }
}

/** A request lost to an idle kept-alive socket the server closed: sent again (ControlConnection #send). */
class StaleSocketError extends ControlUnreachableError {}

export class ControlConnection {
  readonly origin: string
  readonly #prefix: string
  readonly #url: URL
  readonly #headers: Record<string, string>
  readonly #agent: HttpAgent
  readonly #ca: string | undefined

  constructor(options: ControlConnectionOptions) {
    this.#url = options.url
    this.origin = options.url.origin
    this.#prefix = options.url.pathname.replace(/\/+$/, '')
    this.#headers = { accept: 'application/json', authorization: `Bearer ${options.token}` }
    this.#ca = options.ca
    this.#agent = options.url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, ca: options.ca }) : new HttpAgent({ keepAlive: true })
  }

  /** GETs `path`; the answer, whatever its status. Rejects with ControlUnreachableError. */
  get(path: string, timeoutMs: number): Promise<ControlReply> {
    return this.#send('GET', path, undefined, timeoutMs)
  }

  /** POSTs the JSON `body` (text, or its UTF-8 bytes); the answer, whatever its status. */
  post(path: string, body: string | Buffer, timeoutMs: number): Promise<ControlReply> {
    return this.#send('POST', path, body, timeoutMs)
  }

  /** `get`/`post` that resolves to the body of a 200 and rejects with ControlRefusedError otherwise. */
  async expectOk(reply: Promise<ControlReply>): Promise<unknown> {
    const { status, body } = await reply
    if (status === 200) return body
    const message = (body as { message?: unknown; error?: unknown } | null)?.message ?? (body as { error?: unknown } | null)?.error
    throw new ControlRefusedError(this.origin, status, typeof message === 'string' ? message : 'no message')
  }

  /** `expectOk` whose body must be the fleet message `id`; rejects with ControlUnreachableError when it is not. */
  async expectMessage<K extends keyof FleetMessages>(id: K, reply: Promise<ControlReply>): Promise<FleetMessages[K]> {
    const body = await this.expectOk(reply)
    const read = readFleetMessage(id, body)
    if (!read.ok) throw new ControlUnreachableError(this.origin, `answered with a body that is ${read.problem}`)
    return read.value
  }

  close(): void {
    this.#agent.destroy()
  }

  // A kept-alive socket trust-control closed as idle just as this request went out fails before any
  // answer (the race node:http documents with `reusedSocket`): sent again once, on a fresh socket.
  // trust-control had not read it, so a capture is not counted twice.
  async #send(method: 'GET' | 'POST', path: string, json: string | Buffer | undefined, timeoutMs: number): Promise<ControlReply> {
    // encoded once, for its length and for the (possibly repeated) write
    const body = typeof json === 'string' ? Buffer.from(json) : json
    try {
      return await this.#sendOnce(method, path, body, timeoutMs)
    } catch (err) {
      if (!(err instanceof StaleSocketError)) throw err
      return this.#sendOnce(method, path, body, timeoutMs)
    }
  }

  #sendOnce(method: 'GET' | 'POST', path: string, body: Buffer | undefined, timeoutMs: number): Promise<ControlReply> {
    const url = new URL(this.#prefix + path, this.#url)
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const headers = body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json', 'content-length': String(body.length) }
    return new Promise<ControlReply>((resolve, reject) => {
      const req = send(url, { method, headers, agent: this.#agent, ca: this.#ca })
      let settled = false
      const fail = (detail: string, cause?: unknown) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        req.destroy()
        reject(new ControlUnreachableError(this.origin, detail, cause))
      }
      // one deadline for the whole exchange: a silent network (no RST) must not hold a caller
      const timer = setTimeout(() => fail(`no complete answer to ${method} ${url.pathname} within ${timeoutMs} ms`), timeoutMs)
      let answered = false
      req.once('error', err => {
        const code = (err as NodeJS.ErrnoException).code
        if (req.reusedSocket && !answered && !settled && (code === 'ECONNRESET' || code === 'EPIPE')) {
          settled = true
          clearTimeout(timer)
          req.destroy()
          reject(new StaleSocketError(this.origin, `${method} ${url.pathname}: ${code} on a kept-alive socket`, err))
          return
        }
        fail(`${method} ${url.pathname}: ${code ?? err.message}`, err)
      })
      req.once('response', (res: IncomingMessage) => {
        answered = true
        const chunks: Buffer[] = []
        let length = 0
        res.on('data', (chunk: Buffer) => {
          length += chunk.length
          if (length > MAX_ANSWER_BYTES) fail(`the answer to ${method} ${url.pathname} is longer than ${MAX_ANSWER_BYTES} bytes`)
          else chunks.push(chunk)
        })
        res.once('error', err => fail(`${method} ${url.pathname}: ${err.message}`, err))
        res.once('end', () => {
          if (settled) return
          let parsed: unknown
          try {
            parsed = readJson(Buffer.concat(chunks).toString('utf8'), EXACT_JSON_LIMITS).value
          } catch (err) {
            return fail(`${method} ${url.pathname} answered ${res.statusCode} with a body that is not JSON`, err)
          }
          settled = true
          clearTimeout(timer)
          resolve({ status: res.statusCode ?? 0, body: parsed })
        })
      })
      req.end(body)
    })
  }
}
