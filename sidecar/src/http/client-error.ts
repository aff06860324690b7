// Requests node:http cannot parse never reach a route: headers over its size limit, a method token its
// parser does not know, broken framing, a request that took too long to arrive. Node's own answer is a
// bare status line with no body; this one carries the spec 02 error body, so the client (and its logs)
// learn what was wrong. A method token the parser does not know gets what every other method outside
// the seven gets from the proxy (spec 01: 405 with Allow, no error body). The connection always
// closes: after a parse error nothing on the stream can be trusted to start a request.
import { maxHeaderSize, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { BadRequestError, type GateError, HTTP_METHODS } from '@gate/sdk'
import { errorBody } from '@gate/sdk/server'

const ALLOW = HTTP_METHODS.join(', ')

type ClientError = Error & { code?: string }

/**
 * The answer to a request the HTTP parser refused: status, extra headers, and the error its body
 * reports (none for 405).
 */
export function classifyClientError(err: ClientError, maxHeaderBytes: number): { status: number; headers: Record<string, string>; error?: GateError } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, headers: {}, error: new BadRequestError(`the request's headers exceed ${maxHeaderBytes} bytes`) }
    case 'HPE_INVALID_METHOD':
      return { status: 405, headers: { allow: ALLOW } }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, headers: {}, error: new BadRequestError('the request did not arrive in time') }
    default:
      return { status: 400, headers: {}, error: new BadRequestError(`malformed HTTP request${err.code === undefined ? '' : ` (${err.code})`}`) }
  }
}

/** The server's `clientError` listener. */
export function answerClientError(err: ClientError, socket: Duplex): void {
  // a reset peer, or an answer already under way on this connection: nothing more can be said
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent === true) {
    socket.destroy()
    return
  }
  const { status, headers, error } = classifyClientError(err, maxHeaderSize)
  const json = error === undefined ? '' : JSON.stringify(errorBody(error).body)
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, `content-length: ${Buffer.byteLength(json)}`, 'connection: close']
  if (error !== undefined) head.push('content-type: application/json')
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
  socket.end(`${head.join('\r\n')}\r\n\r\n${json}`)
}
