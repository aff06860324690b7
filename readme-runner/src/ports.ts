// The ports a README names, and the same text with each moved to another: the runner gives every
// documented port a free one for its run, so a busy machine (or another run beside it) never makes a
// README fail, while two commands that name the same port still meet on the same free one.
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'

// A port in a URL or address (127.0.0.1:9090, localhost:3000), PORT=3000, and -p 3000. Ports below
// 1024 are never documented ones (and :9 is how a test names a dead address).
const PORT_PATTERNS: readonly RegExp[] = [/(\b(?:127\.0\.0\.1|localhost):)(\d{4,5})\b/g, /(\bPORT=)(\d{4,5})\b/g, /((?:^|\s)-p\s+)(\d{4,5})\b/g]

/** The documented ports in `texts`, in order of first mention. */
export function documentedPorts(texts: readonly string[]): number[] {
  const ports: number[] = []
  for (const text of texts) {
    for (const pattern of PORT_PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const port = Number(match[2])
        if (port >= 1024 && port <= 65535 && !ports.includes(port)) ports.push(port)
      }
    }
  }
  return ports
}

/** `text` with every documented port replaced by its moved one. */
export function movePorts(text: string, moved: ReadonlyMap<number, number>): string {
  let out = text
  for (const pattern of PORT_PATTERNS) {
    out = out.replace(pattern, (whole, prefix: string, port: string) => {
      const to = moved.get(Number(port))
      return to === undefined ? whole : `${prefix}${to}`
    })
  }
  return out
}

/** The port a server command listens on: its --listen HOST:PORT, PORT=N or -p N. */
export function listenPort(command: string): number | undefined {
  const match = /--listen\s+\S*:(\d+)\b/.exec(command) ?? /\bPORT=(\d+)\b/.exec(command) ?? /(?:^|\s)-p\s+(\d+)\b/.exec(command)
  return match === null ? undefined : Number(match[1])
}

/** A port the system calls free now (bound on 127.0.0.1 and released). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

/** Each documented port mapped to a distinct free port. */
export async function movedPorts(ports: readonly number[]): Promise<Map<number, number>> {
  const moved = new Map<number, number>()
  for (const port of ports) {
    let to = await freePort()
    while ([...moved.values()].includes(to)) to = await freePort()
    moved.set(port, to)
  }
  return moved
}
