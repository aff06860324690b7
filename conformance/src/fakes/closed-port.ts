// A loopback URL nothing listens on: bind port 0, read the port back, close (spec 02: an unreachable
// sidecar must make the SDK deny with gate_sidecar_unreachable).
import { once } from 'node:events'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'

/** The URL of a loopback port that was free a moment ago and is now closed. */
export async function reserveClosedPort(): Promise<string> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}
