// Keeps an upstream that closes its connection from ending the process. undici 7's HTTP/1 client
// finishes its parser when a connection that is not kept alive ends (HTTP/1.0, `Connection: close`)
// or is reset, and asserts there that the parser is not paused (nodejs/undici#5360): thrown from the
// socket's 'end' or 'error' listener, the AssertionError is uncaught and the process exits. The relay
// pauses the parser while the finalized receipt is written and while the client reads slower than
// the upstream sends, so an upstream closing at such a moment killed `gate api protect` (issue 45).
// undici 8 fixes the parser but needs Node >= 22.19; Gate supports Node 20.
//
// The guard wraps every socket the pool's connector opens and runs before undici's listeners. When the
// upstream's side ends, the exchange on that socket resumes the parser and takes the rest without
// pausing again (the upstream sends nothing more, so nothing is left to hold back); a reset while the
// exchange holds the parser paused reaches undici as an error without the ECONNRESET code, so undici
// fails the exchange instead of finishing the paused parser. Which exchange runs on a socket is learnt
// from undici's `undici:client:sendHeaders` diagnostics channel, published right after the exchange's
// onRequestStart, synchronously, for the socket the request is written to (one at a time: the pool
// does not pipeline).
import { subscribe } from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import type { buildConnector } from 'undici'
import { ProtectError } from './errors.js'

/** What the guard needs of the exchange running on a socket. */
export interface GuardedExchange {
  /** True while the exchange holds undici's parser paused. */
  readonly holdsParser: boolean
  /** The upstream ended its side of the connection: resume now and never pause again. */
  onUpstreamEnd(): void
  /** The socket's guard while the exchange runs on it (set by the guard, cleared by the exchange). */
  guard: SocketGuard | undefined
}

/** The exchange currently on one upstream socket. */
export interface SocketGuard {
  exchange: GuardedExchange | undefined
}

const guards = new WeakMap<object, SocketGuard>()
/** The exchange whose request undici is about to write (set in its onRequestStart). */
let starting: GuardedExchange | undefined
let subscribed = false

/** Called by an exchange as undici starts it, right before undici writes its request to a socket. */
export function noteExchangeStarting(exchange: GuardedExchange): void {
  starting = exchange
}

/** `connector` with every socket it opens guarded. */
export function guardedConnector(connector: buildConnector.connector): buildConnector.connector {
  if (!subscribed) {
    subscribed = true
    subscribe('undici:client:sendHeaders', message => {
      // other undici clients in the process publish here too: only the guarded sockets are ours
      const guard = guards.get((message as { socket: object }).socket)
      if (guard === undefined || starting === undefined) return
      guard.exchange = starting
      starting.guard = guard
      starting = undefined
    })
  }
  return (options, callback) =>
    connector(options, (err, socket) => {
      if (!err && socket) guardSocket(socket)
      ;(callback as (err: Error | null, socket: Socket | null) => void)(err, socket)
    })
}

function guardSocket(socket: Socket): void {
  const guard: SocketGuard = { exchange: undefined }
  guards.set(socket, guard)
  const emit = socket.emit
  socket.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    const exchange = guard.exchange
    if (exchange !== undefined) {
      if (event === 'end') exchange.onUpstreamEnd()
      else if (event === 'error' && exchange.holdsParser && (args[0] as { code?: unknown } | undefined)?.code === 'ECONNRESET') {
        args[0] = new ProtectError('Upstream', 'the upstream reset the connection (ECONNRESET)', args[0])
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean
  } as Socket['emit']
}
