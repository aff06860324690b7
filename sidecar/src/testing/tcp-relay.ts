// A loopback TCP relay for fault tests: the network between a sidecar and trust-control. `cut()` closes
// the listener and every open connection (the port then refuses, as a dead host or a firewall reset
// would), `restore()` listens on the same port again, and `retarget()` points it at a restarted server.
import { createServer, connect, type Server, type Socket } from 'node:net'
import { once } from 'node:events'

export interface TcpRelay {
  url: string
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  retarget(port: number): void
  close(): Promise<void>
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  let target = targetPort
  const open = new Set<Socket>()
  const makeServer = (): Server =>
    createServer(client => {
      const upstream = connect(target, '127.0.0.1')
      open.add(client).add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        open.delete(client)
        open.delete(upstream)
      }
      client.on('error', drop).on('close', drop)
      upstream.on('error', drop).on('close', drop)
      client.pipe(upstream)
      upstream.pipe(client)
    })
  let server = makeServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  const shut = async () => {
    if (!server.listening) return
    const closed = new Promise<void>(resolve => server.close(() => resolve()))
    for (const socket of open) socket.destroy()
    open.clear()
    await closed
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    cut: shut,
    async restore() {
      server = makeServer()
      server.listen(port, '127.0.0.1')
      await once(server, 'listening')
    },
    retarget(next) {
      target = next
    },
    close: shut,
  }
}
