// A loopback server that accepts connections and requests and never answers (spec 02: the SDK's
// timeout must end the call with gate_timeout). Closing it destroys the held sockets.
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface LoopbackServer {
  url: string
  close(): Promise<void>
}

/** Starts the server on 127.0.0.1:0. */
export async function startSilentServer(): Promise<LoopbackServer> {
  const sockets = new Set<Socket>()
  const server: Server = createServer(req => {
    req.resume() // read the request, never answer
  })
  server.on('connection', s => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server, sockets),
  }
}

/** Closes a server and destroys its open sockets. */
export function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy()
  return new Promise(resolve => server.close(() => resolve()))
}
