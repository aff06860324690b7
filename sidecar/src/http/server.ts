// The node:http server both `gate sidecar` and `gate api protect` run: routes first, then an optional
// fallback (the proxy), errors turned into the spec's bodies, and a drain that waits for in-flight
// requests on shutdown. Plain node:http was chosen by measurement (docs/performance.md).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { MethodNotAllowedError, NotFoundError, TargetNotOriginFormError } from '@gate/sdk'
import { chargeBodyTo, createBodyBudget, sendError, type BodyBudget, type BodyBudgetOptions } from '@gate/sdk/server'
import { LISTENER_TIMEOUT_DEFAULTS, type ListenerTimeouts } from '../config/listener-timeouts.js'
import { ForeignHostError } from '../errors.js'
import { answerClientError } from './client-error.js'
import type { Router } from './router.js'
import { listenOnSocket } from './unix-socket.js'

/** The handler of requests no route matched; what it resolves with is its business (the proxy: its route label). */
export type FallbackHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => unknown

export interface GateServerOptions {
  router: Router
  /** Handles every request no route matched (the reverse proxy); without it such requests get 404. */
  fallback?: FallbackHandler
  /** Called with unexpected errors (never with the request's credentials). */
  onError?: (err: unknown) => void
  /** Runs first for every request; returns true when it has answered (the hosted edge's Host check). */
  screen?: (req: IncomingMessage, res: ServerResponse) => boolean
  /**
   * Why a request to Gate's own routes is refused (403), or undefined: the Host and Origin check of a
   * loopback listener (DNS rebinding, rebinding-guard.ts). Requests the fallback proxies are the
   * upstream's, with its own Host names, and are not checked here.
   */
  routeGuard?: (req: IncomingMessage) => string | undefined
  /**
   * Called once a routed request's answer is done (or its connection closed), with its route template
   * (never the raw path) and the seconds since it was routed: the HTTP metrics.
   */
  onRouteDone?: (route: string, req: IncomingMessage, res: ServerResponse, seconds: number) => void
  /** Serve HTTPS with this certificate chain and key (PEM); plain HTTP without. */
  tls?: { cert: Buffer; key: Buffer }
  /** Header, request, keep-alive and idle timeouts. Default LISTENER_TIMEOUT_DEFAULTS. */
  timeouts?: ListenerTimeouts
  /** Bounds of the request bodies buffered at once (server and per connection). Default BODY_BUDGET_DEFAULTS. */
  bodyBudget?: BodyBudgetOptions
}

export interface GateServer {
  server: Server
  listen(host: string, port: number): Promise<AddressInfo>
  /** Listens on a Unix domain socket at `path`, created 0600 (unix-socket.ts); the path must be free. */
  listenOnSocket(path: string): Promise<void>
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), then closes idle sockets. */
  drain(graceMs: number): Promise<void>
  inFlight(): number
  /** Request body bytes buffered right now. */
  readonly bodyBudget: BodyBudget
}

// What a routed request carries until its answer closes (for onRouteDone): set on the response itself,
// so the one 'close' listener per request is a function shared by all of them, not a closure each.
const ROUTE = Symbol('gate.route')
const ROUTED_AT = Symbol('gate.routedAt')
type RoutedResponse = ServerResponse & { [ROUTE]?: string; [ROUTED_AT]?: number }

export function createGateServer(options: GateServerOptions): GateServer {
  let inFlight = 0
  let idle: (() => void) | undefined
  const onRouteDone = options.onRouteDone
  function closed(this: RoutedResponse): void {
    inFlight--
    if (inFlight === 0) idle?.()
    const route = this[ROUTE]
    if (route !== undefined && onRouteDone !== undefined) onRouteDone(route, this.req, this, (performance.now() - this[ROUTED_AT]!) / 1000)
  }
  const timeouts = options.timeouts ?? LISTENER_TIMEOUT_DEFAULTS
  const bodyBudget = createBodyBudget(options.bodyBudget)
  const settings = {
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // node checks the two request timeouts only this often (30 s by default): slowloris lived on that
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
  }
  const server: Server = options.tls === undefined ? createServer(settings, handleRequest) : createTlsServer({ ...settings, cert: options.tls.cert, key: options.tls.key }, handleRequest)
  server.timeout = timeouts.socketIdleTimeoutMs
  // requests the HTTP parser refuses get the spec's error body too (client-error.ts)
  server.on('clientError', answerClientError)

  function handleRequest(req: IncomingMessage, res: ServerResponse): void {
    inFlight++
    chargeBodyTo(req, res, bodyBudget)
    res.on('close', closed)
    dispatch(req, res).catch(err => {
      options.onError?.(err)
      sendError(res, err)
    })
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.screen?.(req, res) === true) return
    const target = req.url ?? '/'
    if (!target.startsWith('/')) return sendError(res, new TargetNotOriginFormError(target))
    // Routes are looked up by the path exactly as sent: a WHATWG URL would resolve `..` and `%2e%2e`
    // (`/pets/../approvals` reaching the approvals routes while the proxy sees another path) and, for a
    // target starting with `//`, read an authority (`//host/gate/evaluate`; `//:)` not a URL at all).
    // The URL handed to handlers is for their query parameters.
    const end = target.search(/[?#]/)
    const pathname = end === -1 ? target : target.slice(0, end)
    const url = new URL(`http://gate.local${target}`)
    const found = options.router.lookup(req.method ?? 'GET', pathname)
    if (options.routeGuard !== undefined && (found.kind === 'found' || options.fallback === undefined)) {
      const refusal = options.routeGuard(req)
      if (refusal !== undefined) return sendError(res, new ForeignHostError(refusal))
    }
    if (found.kind === 'found') {
      if (onRouteDone !== undefined) {
        ;(res as RoutedResponse)[ROUTE] = found.pattern
        ;(res as RoutedResponse)[ROUTED_AT] = performance.now()
      }
      return found.handler(req, res, found.params, url)
    }
    if (options.fallback !== undefined && found.kind === 'not_found') {
      await options.fallback(req, res, url)
      return
    }
    if (found.kind === 'method_not_allowed') {
      res.setHeader('allow', found.allowed.join(', '))
      return sendError(res, new MethodNotAllowedError(req.method ?? '', pathname))
    }
    return sendError(res, new NotFoundError(`route ${pathname}`))
  }

  return {
    server,
    bodyBudget,
    inFlight: () => inFlight,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          resolve(server.address() as AddressInfo)
        })
      })
    },
    listenOnSocket: path => listenOnSocket(server, path),
    async drain(graceMs) {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      server.closeIdleConnections()
      if (inFlight > 0) {
        await Promise.race([new Promise<void>(resolve => (idle = resolve)), new Promise(resolve => setTimeout(resolve, graceMs).unref())])
      }
      server.closeAllConnections()
      await closed
    },
  }
}
