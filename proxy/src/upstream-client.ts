// The hop to the upstream: one keep-alive undici Pool for the upstream origin, driven through undici's
// dispatch API so a response is relayed chunk by chunk into the client's ServerResponse without a
// Readable in between (measured: stream.pipeline's per-request AbortController/DOMException and the
// body stream were a large share of the proxy's own CPU). A wall-clock ceiling covers the whole
// exchange (spec 01: `--upstream-timeout-secs` includes reading the full response, so undici's
// per-phase idle timeouts alone would not do: a server trickling one byte a second never trips them).
import type { ServerResponse } from 'node:http'
import { buildConnector, Pool, errors as undiciErrors, type Dispatcher } from 'undici'
import { ProtectError } from './errors.js'
import type { ResolvedProxyOptions } from './options.js'
import { guardedConnector, noteExchangeStarting, type GuardedExchange, type SocketGuard } from './upstream-end-guard.js'

export interface UpstreamRequest {
  method: string
  /** Path and query as sent upstream (base path prefix already applied). */
  path: string
  /** Flat [name, value, ...] headers. */
  headers: string[]
  body: Buffer | null
}

/**
 * What the relay asks of its caller once the upstream's status and headers are in: resolve to start
 * relaying the body into `res` (after writing the head), or reject to drop the upstream answer.
 */
export type OnUpstreamHead = (statusCode: number, headers: Record<string, string | string[] | undefined>) => Promise<void>

/** How an exchange ended. */
export type RelayOutcome =
  /** The whole body was relayed. */
  | { kind: 'relayed' }
  /** Failed before the head was accepted: nothing was written to `res`; the caller answers (502). */
  | { kind: 'failed'; error: ProtectError }
  /** The head was rejected by the caller (it has answered itself). */
  | { kind: 'dropped' }
  /** Failed mid-body: `res` was destroyed, the client sees a cut connection. */
  | { kind: 'cut'; error: Error }

export class UpstreamClient {
  readonly #pool: Pool
  readonly #timeoutMs: number

  constructor(options: ResolvedProxyOptions) {
    this.#timeoutMs = options.upstreamTimeoutMs
    this.#pool = new Pool(options.upstream.origin, {
      connections: options.upstreamConnections,
      pipelining: 1,
      // per-phase ceilings no looser than the wall clock; the timer in relay() is the real bound
      headersTimeout: options.upstreamTimeoutMs,
      bodyTimeout: options.upstreamTimeoutMs,
      // every socket guarded: an upstream closing while the parser is paused must not end the process
      connect: guardedConnector(buildConnector({ timeout: Math.min(options.upstreamTimeoutMs, 10_000) })),
    })
  }

  /** Sends one request and relays its answer into `res`; never rejects. */
  relay(request: UpstreamRequest, res: ServerResponse, onHead: OnUpstreamHead): Promise<RelayOutcome> {
    return new Promise<RelayOutcome>(resolve => {
      const handler = new RelayHandler(request.method, res, onHead, resolve, this.#timeoutMs)
      try {
        this.#pool.dispatch(
          { method: request.method as Dispatcher.HttpMethod, path: request.path, headers: request.headers, body: request.body },
          handler,
        )
      } catch (err) {
        handler.fail(toUpstreamError(err))
      }
    })
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}

type Controller = Dispatcher.DispatchController

/** One exchange: waits for the head, lets the caller finalize, then streams the body with backpressure. */
class RelayHandler implements Dispatcher.DispatchHandler, GuardedExchange {
  #controller: Controller | undefined
  guard: SocketGuard | undefined
  /** The upstream ended its side (upstream-end-guard.ts): the parser must not be paused again. */
  #upstreamEnded = false
  /** The answer has no body (HEAD, 204, 304): nothing to hold back while the head is finalized. */
  #bodyless = false
  #settled = false
  #headAccepted = false
  /** A body byte was handed to the client response (and with it the head). */
  #bodyWritten = false
  /** Chunks that arrived while the caller was still handling the head (pause is advisory). */
  #pending: Buffer[] | null = null
  #ended = false
  /** True between the head arriving and the caller accepting it. */
  #headPending = false
  /** An error that arrived while the head was pending: handled once the caller is done with it. */
  #deferredError: Error | undefined
  readonly #timer: NodeJS.Timeout
  #abortReason: Error | undefined

  constructor(
    private readonly method: string,
    private readonly res: ServerResponse,
    private readonly onHead: OnUpstreamHead,
    private readonly settle: (outcome: RelayOutcome) => void,
    timeoutMs: number,
  ) {
    this.#timer = setTimeout(() => this.#abort(new ProtectError('Upstream', `no complete upstream answer within ${timeoutMs / 1000}s (--upstream-timeout-secs)`)), timeoutMs)
    // the client went away: stop the upstream exchange too
    res.once('close', this.#onClientClose)
  }

  get holdsParser(): boolean {
    return this.#controller?.paused === true
  }

  onUpstreamEnd(): void {
    this.#upstreamEnded = true
    if (this.#controller?.paused === true) this.#controller.resume()
  }

  onRequestStart(controller: Controller): void {
    this.#controller = controller
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason)
    else noteExchangeStarting(this)
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200 || this.#settled) return // 1xx informational: the final head follows
    if (statusCode === 204 && declaresBody(headers)) {
      // RFC 9110 §8.6, RFC 9112 §6.1: a 204 has no body, so one announcing a body is a broken answer
      // (and its bytes would be read as the next response): spec 01's 502, not a relayed 204
      const error = new ProtectError('Upstream', 'upstream answered 204 with a body (Content-Length or Transfer-Encoding)')
      this.fail(error)
      return controller.abort(error)
    }
    this.#bodyless = statusCode === 204 || statusCode === 304 || this.method === 'HEAD'
    // hold the body back while the caller finalizes; an answer without one has nothing to hold
    if (!this.#bodyless && !this.#upstreamEnded) controller.pause()
    this.#pending = []
    this.#headPending = true
    this.onHead(statusCode, headers).then(
      () => {
        this.#headPending = false
        if (this.#settled) return
        try {
          if (this.#deferredError !== undefined) {
            // the head is decided and its receipt recorded, the body cannot follow: the head goes out
            // (the client sees the status and the receipt id), then the connection is cut
            return this.#cutAfterHead(this.#deferredError)
          }
          this.#headAccepted = true
          const pending = this.#pending ?? []
          this.#pending = null
          for (const chunk of pending) this.res.write(chunk)
          this.#bodyWritten = pending.length > 0
          if (this.#ended) return this.#finish()
          controller.resume()
        } catch (err) {
          // never an unhandled rejection: the exchange is cut, the process stays up
          this.res.destroy(err as Error)
          this.#done({ kind: 'cut', error: err as Error })
        }
      },
      () => {
        this.#headPending = false
        // the caller has answered (its receipt could not be recorded, or the head cannot be relayed)
        this.#done({ kind: 'dropped' })
        controller.abort(new ProtectError('Io', 'upstream answer dropped'))
      },
    )
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.#settled) return
    if (this.#pending !== null) {
      this.#pending.push(chunk)
      return
    }
    this.#bodyWritten = true
    if (!this.res.write(chunk) && !this.#upstreamEnded) {
      controller.pause()
      this.res.once('drain', () => controller.resume())
    }
  }

  onResponseEnd(): void {
    this.#ended = true
    if (this.#headAccepted) this.#finish()
  }

  onResponseError(_controller: Controller, error: Error): void {
    if (this.#settled) return
    // undici 7 reads a 304's Content-Length (the length of the body it stands for, RFC 9110 §8.6) as
    // the length of a body a 304 never has: the answer is complete
    if (this.#bodyless && (error as { code?: string }).code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return this.onResponseEnd()
    const reason = this.#abortReason ?? error
    if (this.#headPending) {
      this.#deferredError = reason
      return
    }
    if (this.#headAccepted) {
      // mid-body: a silently short body would look complete, so the client connection is cut (at once
      // when body bytes went out, which carried the head; a client not reading them must not hold it open)
      if (this.#bodyWritten) {
        this.res.destroy(reason)
        return this.#done({ kind: 'cut', error: reason })
      }
      return this.#cutAfterHead(reason)
    }
    this.fail(toUpstreamError(reason))
  }

  /**
   * The head is decided and its receipt recorded, the body cannot follow (or not all of it): the head goes
   * out first (the client sees the status and the receipt id, even when no body byte was written yet and
   * node still holds the head back), then the connection is cut.
   */
  #cutAfterHead(error: Error): void {
    this.res.flushHeaders()
    const socket = this.res.socket
    if (socket?.writable) socket.write('', () => this.res.destroy(error))
    else this.res.destroy(error)
    this.#done({ kind: 'cut', error })
  }

  fail(error: ProtectError): void {
    this.#done({ kind: 'failed', error })
  }

  #finish(): void {
    this.res.end()
    this.#done({ kind: 'relayed' })
  }

  #abort(reason: Error): void {
    if (this.#settled) return
    this.#abortReason = reason
    if (this.#controller !== undefined) this.#controller.abort(reason)
    else this.fail(toUpstreamError(reason)) // still queued in the pool: answer now, abort on start
  }

  readonly #onClientClose = (): void => {
    if (!this.#settled && !this.res.writableFinished) this.#abort(new ProtectError('Io', 'client closed the connection'))
  }

  #done(outcome: RelayOutcome): void {
    if (this.#settled) return
    this.#settled = true
    if (this.guard?.exchange === this) this.guard.exchange = undefined
    clearTimeout(this.#timer)
    this.res.off('close', this.#onClientClose)
    this.settle(outcome)
  }
}

/** True when a header announces a body: a Content-Length other than 0, or any Transfer-Encoding. */
function declaresBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && String(length).trim() !== '0')
}

/** `Upstream` for a failed connection or timeout, `HttpClient` when the request could not be built. */
function toUpstreamError(err: unknown): ProtectError {
  if (err instanceof ProtectError) return err
  const e = err as Error & { code?: string }
  if (err instanceof undiciErrors.InvalidArgumentError || err instanceof undiciErrors.NotSupportedError) {
    return new ProtectError('HttpClient', `upstream request could not be built: ${e.message}`, err)
  }
  return new ProtectError('Upstream', `upstream request failed: ${e.code ?? e.name}: ${e.message}`, err)
}
