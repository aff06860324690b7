// A raw node:net upstream for the faults no real server produces on demand (the upstream matrix,
// cli/api-protect-upstreams.test.ts): each answer below is written byte for byte, keep-alive unless it
// closes. Requests carry no body here; each one is read up to its blank line.
//
//   /ok                 200 "ok"
//   /204-with-length    a 204 with Content-Length: 11 and 11 bytes after it
//   /204-chunked        a 204 with Transfer-Encoding: chunked and a chunk after it
//   /304-with-length    a 304 with Content-Length: 10 (the length of the body it stands for)
//   /mid-body-close     Content-Length: 100, 7 bytes, then the connection closes
//   /mid-chunk-close    a chunked body cut inside its first chunk by the close
//   /head-then-close    Content-Length: 100 and `Connection: close`, then the close, no body byte
//   /close-unanswered   the connection closes without an answer
//   /garbage            bytes that are not HTTP
//   /never              no answer, ever (the upstream timeout's case)
//   /never-ending       a head and 7 body bytes of 100, then nothing more
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'

const ANSWERS: Record<string, { bytes: string; close?: boolean } | 'close' | 'never'> = {
  '/ok': { bytes: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok' },
  '/204-with-length': { bytes: 'HTTP/1.1 204 No Content\r\nContent-Length: 11\r\n\r\noops-a-body' },
  '/204-chunked': { bytes: 'HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n4\r\noops\r\n0\r\n\r\n' },
  '/304-with-length': { bytes: 'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\nContent-Length: 10\r\n\r\n' },
  '/mid-body-close': { bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial', close: true },
  '/mid-chunk-close': { bytes: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\npartial', close: true },
  '/head-then-close': { bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n', close: true },
  '/close-unanswered': 'close',
  '/garbage': { bytes: 'NOT HTTP AT ALL\r\n\r\n', close: true },
  '/never': 'never',
  '/never-ending': { bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial' },
}

export interface RawUpstream {
  url: string
  close(): Promise<void>
}

/** Starts the raw upstream on 127.0.0.1 (a port of its own). */
export async function startRawUpstream(): Promise<RawUpstream> {
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buffered = ''
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1')
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end)
        buffered = buffered.slice(end + 4)
        const path = head.split(' ')[1] ?? '/'
        const answer = ANSWERS[path] ?? { bytes: 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n' }
        if (answer === 'never') continue
        if (answer === 'close') return void socket.end()
        socket.write(answer.bytes, 'latin1')
        if (answer.close === true) return void socket.end()
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
