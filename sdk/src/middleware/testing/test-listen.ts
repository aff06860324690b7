// Where test servers listen and how test clients reach them, over TCP (127.0.0.1, a free port) or a
// Unix domain socket (a fresh directory under the OS temp dir: t.testdir() paths can exceed the 107
// bytes a socket path may have). Test support only.
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent } from 'undici'
import { UNIX_PREFIX } from '../sidecar-url.js'

/** How the SDK reaches a sidecar in a test. */
export type TestTransport = 'tcp' | 'unix'

/** A fresh, empty directory for a socket (0700, from mkdtemp); removed by the returned function. */
export function socketDirectory(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gate-sock-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Listens on `transport`; resolves the base URL (`http://127.0.0.1:PORT` or `unix:PATH`) and a cleanup for after close. */
export async function listenForTest(server: Server, transport: TestTransport = 'tcp'): Promise<{ url: string; cleanup(): void }> {
  if (transport === 'tcp') {
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, cleanup: () => undefined }
  }
  const socket = socketDirectory()
  const path = join(socket.dir, 'server.sock')
  server.listen(path)
  await once(server, 'listening')
  return { url: `${UNIX_PREFIX}${path}`, cleanup: socket.remove }
}

/** The undici request target for `baseUrl` + `path`: a socket dispatcher for `unix:` URLs (close it after). */
export function requestTarget(baseUrl: string, path: string): { url: string; dispatcher: Agent | undefined } {
  if (!baseUrl.startsWith(UNIX_PREFIX)) return { url: baseUrl + path, dispatcher: undefined }
  return { url: `http://localhost${path}`, dispatcher: new Agent({ connect: { socketPath: baseUrl.slice(UNIX_PREFIX.length) } }) }
}
