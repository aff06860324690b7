// Starting the suite's own fake servers: listen on 127.0.0.1 with a free port, remember open sockets,
// and close by destroying them (a fake may be holding requests open on purpose).
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface LoopbackServer {
  url: string
  close(): Promise<void>
}

/** Listens on 127.0.0.1:0; `close` destroys the open sockets, then closes the server. */
export async function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  const sockets = new Set<Socket>()
  server.on('connection', s => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise(resolve => server.close(() => resolve()))
    },
  }
}
