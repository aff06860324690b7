// The Node transport for `http://` and `unix:` sidecars: keep-alive HTTP/1.1 over node:net sockets,
// one request per connection at a time (a slow evaluation never holds up another), one write per
// request and one deadline over the whole exchange. It does only what the three sidecar calls need,
// which is what makes it cheap: measured against an undici Pool it takes about half the app's CPU
// per exchange (docs/performance.md, "The middleware's own cost"). node:net is taken from
// process.getBuiltinModule, so the module loads on the edge too (where `unix:` is refused up front).
import type { Socket } from 'node:net'
import { EvaluationFailedError, type GateError, SidecarTimeoutError, SidecarUnreachableError } from '../errors.js'
import { loadNodeBuiltin } from '../protocol/node-builtin.js'
import { Http1ResponseReader } from './http1-response-reader.js'
import { MAX_SIDECAR_ANSWER_BYTES, type SidecarTransport, type TransportResponse } from './sidecar-client.js'
import type { SidecarTarget } from './sidecar-url.js'

/** Options of the socket transport. */
export interface SocketTransportOptions {
  timeoutMs: number
  /** Connections kept at most; requests beyond them wait for one. */
  connections: number
}

/** The node:net module, or undefined on a runtime without it (the edge). */
export function loadNet(): typeof import('node:net') | undefined {
  return loadNodeBuiltin<typeof import('node:net')>('node:net')
}

// An idle connection is reused only while the server will still keep it: its Keep-Alive timeout less a
// second (a request written as the server closes would fail), 4 s when it names none, 30 s at most.
const DEFAULT_IDLE_MS = 4_000
const MAX_IDLE_MS = 30_000
const HEADER_VALUE = /^[^\r\n\0]*$/
/** One read's worth: an evaluate answer is a few KiB, a larger one arrives in several reads. */
const READ_BUFFER_BYTES = 64 * 1024

interface Exchange {
  head: string
  body: string | undefined
  path: string
  resolve(response: TransportResponse): void
  reject(err: GateError): void
  timer: ReturnType<typeof setTimeout> | undefined
  connection: Connection | undefined
}

interface Connection {
  socket: Socket
  exchange: Exchange | undefined
  reader: Http1ResponseReader | undefined
  /** performance.now() after which this idle connection is not reused. */
  reuseUntil: number
  idleMs: number
}

/** A transport over node:net to an `http` or `unix` target. Throws when node:net is unavailable. */
export function createSocketTransport(target: Exclude<SidecarTarget, { kind: 'https' }>, sidecarUrl: string, options: SocketTransportOptions): SidecarTransport {
  const net = loadNet()
  if (net === undefined) throw new TypeError('node:net is not available on this runtime')
  const basePath = target.kind === 'http' ? target.basePath : ''
  const hostLine = `host: ${target.kind === 'http' ? target.hostHeader : 'localhost'}\r\n`
  const idle: Connection[] = []
  const waiting: Exchange[] = []
  let open = 0
  let closed = false
  let onAllClosed: (() => void) | undefined

  // Reads land in one buffer of this transport instead of a fresh Buffer per read pushed through a
  // stream: the reader copies what it keeps, and an answer whole in one read is decoded from it in place.
  const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES)

  function connect(): Connection {
    const connection = { exchange: undefined, reader: undefined, reuseUntil: 0, idleMs: DEFAULT_IDLE_MS } as Omit<Connection, 'socket'> as Connection
    const onread = {
      buffer: readBuffer,
      callback: (bytes: number) => {
        onData(connection, readBuffer.subarray(0, bytes))
        return true
      },
    }
    const socket = target.kind === 'unix' ? net!.connect({ path: target.path, onread }) : net!.connect({ host: target.host, port: target.port, noDelay: true, onread })
    connection.socket = socket
    open++
    socket.on('end', () => onEnd(connection))
    socket.on('error', (err: Error) => fail(connection, new SidecarUnreachableError(sidecarUrl, err)))
    socket.on('close', () => onClose(connection))
    return connection
  }

  function start(connection: Connection, exchange: Exchange): void {
    connection.exchange = exchange
    connection.reader = new Http1ResponseReader(MAX_SIDECAR_ANSWER_BYTES, exchange.path)
    exchange.connection = connection
    connection.socket.ref()
    connection.socket.write(exchange.body === undefined ? exchange.head : exchange.head + exchange.body)
  }

  function dispatch(exchange: Exchange): void {
    const now = performance.now()
    let connection: Connection | undefined
    while ((connection = idle.pop()) !== undefined) {
      if (connection.reuseUntil > now) return start(connection, exchange)
      connection.socket.destroy()
    }
    if (open < options.connections) return start(connect(), exchange)
    waiting.push(exchange)
  }

  function onData(connection: Connection, chunk: Buffer): void {
    const { exchange, reader } = connection
    if (exchange === undefined || reader === undefined) {
      // bytes while no request is out: not an answer to anything we asked
      connection.socket.destroy()
      return
    }
    let response
    try {
      response = reader.push(chunk)
    } catch (err) {
      return fail(connection, err as GateError)
    }
    if (response === undefined) return
    if (response.keepAliveSeconds !== undefined) connection.idleMs = Math.min(MAX_IDLE_MS, Math.max(0, response.keepAliveSeconds * 1000 - 1000))
    finish(connection, { status: response.status, text: response.body.toString('utf8') }, response.keepAlive)
  }

  function onEnd(connection: Connection): void {
    const { exchange, reader } = connection
    if (exchange === undefined || reader === undefined) return
    let response
    try {
      response = reader.end()
    } catch (err) {
      return fail(connection, new SidecarUnreachableError(sidecarUrl, err))
    }
    finish(connection, { status: response.status, text: response.body.toString('utf8') }, false)
  }

  function finish(connection: Connection, response: TransportResponse, keepAlive: boolean): void {
    const exchange = connection.exchange as Exchange
    clearTimeout(exchange.timer)
    connection.exchange = undefined
    connection.reader = undefined
    exchange.resolve(response)
    if (!keepAlive || closed) {
      connection.socket.destroy()
      return
    }
    const next = waiting.shift()
    if (next !== undefined) return start(connection, next)
    connection.reuseUntil = performance.now() + connection.idleMs
    // an idle connection does not keep the app's process alive
    connection.socket.unref()
    idle.push(connection)
  }

  /** Ends the connection's exchange with `err` and drops the connection (its state is unknown now). */
  function fail(connection: Connection, err: GateError): void {
    const exchange = connection.exchange
    connection.exchange = undefined
    connection.reader = undefined
    connection.socket.destroy()
    if (exchange === undefined) return
    clearTimeout(exchange.timer)
    exchange.reject(err)
  }

  function onClose(connection: Connection): void {
    open--
    const at = idle.indexOf(connection)
    if (at >= 0) idle.splice(at, 1)
    if (connection.exchange !== undefined) fail(connection, new SidecarUnreachableError(sidecarUrl, new Error('the connection closed')))
    if (closed) {
      if (open === 0) onAllClosed?.()
      return
    }
    const next = waiting.shift()
    if (next !== undefined) dispatch(next)
  }

  function onDeadline(exchange: Exchange): void {
    exchange.timer = undefined
    const err = new SidecarTimeoutError(options.timeoutMs)
    if (exchange.connection !== undefined) return fail(exchange.connection, err)
    const at = waiting.indexOf(exchange)
    if (at >= 0) waiting.splice(at, 1)
    exchange.reject(err)
  }

  return {
    send(method, path, headers, body): Promise<TransportResponse> {
      if (closed) return Promise.reject(new SidecarUnreachableError(sidecarUrl, new Error('the transport is closed')))
      let head = `${method} ${basePath}${path} HTTP/1.1\r\n${hostLine}`
      for (const name in headers) {
        const value = headers[name] as string
        // a value is ours or passed readGateHeaders; a line break would still split the request
        if (!HEADER_VALUE.test(value)) return Promise.reject(new EvaluationFailedError(`header ${name} cannot be sent: it holds a line break`))
        head += `${name}: ${value}\r\n`
      }
      head += body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(body)}\r\n\r\n`
      return new Promise<TransportResponse>((resolve, reject) => {
        const exchange: Exchange = { head, body, path, resolve, reject, timer: undefined, connection: undefined }
        exchange.timer = setTimeout(onDeadline, options.timeoutMs, exchange)
        dispatch(exchange)
      })
    },
    close(): Promise<void> {
      closed = true
      for (const exchange of waiting.splice(0)) {
        clearTimeout(exchange.timer)
        exchange.reject(new SidecarUnreachableError(sidecarUrl, new Error('the transport is closed')))
      }
      for (const connection of idle.splice(0)) connection.socket.destroy()
      // exchanges in flight finish first; their connections are then destroyed (finish)
      return open === 0 ? Promise.resolve() : new Promise(resolve => (onAllClosed = resolve))
    },
  }
}
