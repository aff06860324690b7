// A loopback server that accepts connections and requests and never answers (spec 02: the SDK's
// timeout must end the call with gate_timeout). Closing it destroys the held sockets.
import { createServer } from 'node:http'
import { listenOnLoopback, type LoopbackServer } from './loopback.js'

/** Starts the server on 127.0.0.1:0. */
export function startSilentServer(): Promise<LoopbackServer> {
  return listenOnLoopback(
    createServer(req => {
      req.resume() // read the request, never answer
    }),
  )
}
