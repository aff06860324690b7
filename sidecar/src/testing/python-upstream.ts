// Python's own `http.server` as an upstream of `gate api protect` (the upstream matrix,
// cli/api-protect-upstreams.test.ts): the standard library's server and its HTTP/1.0 default, which
// answers and closes the connection, as a small Python API behind Gate would. The handler below only
// picks what to send; framing, status lines and the connection handling are http.server's.
//
//   DELETE /items/{id}   204, HTTP/1.0 (the connection closes after it)
//   GET    /items/{id}   200 JSON with Content-Length; HEAD the same without the body
//   GET    /no-content   204 with `Connection: close`, HTTP/1.1
//   GET    /etag         200 with ETag "v1"; 304 when If-None-Match is "v1"
//   GET    /close-delimited?bytes=N  HTTP/1.0 body ("hello", or N bytes) with no length: ends at the close
//   GET    /chunked      HTTP/1.1 chunked body in three chunks
//   GET    /trailers     HTTP/1.1 chunked body followed by a trailer field
//   GET    /early-hints  103 Early Hints, then 200 (HTTP/1.1)
//   GET    /continue     an unasked-for 100 Continue, then 200 (HTTP/1.1)
//   POST   /upload       200 JSON: the body's length and the Expect header it arrived with
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const APP = String.raw`
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'

    def log_message(self, format, *args):
        pass

    def body(self, status, data, content_type='application/json', headers=()):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def chunked(self, chunks, trailer=None):
        self.protocol_version = 'HTTP/1.1'
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Transfer-Encoding', 'chunked')
        if trailer is not None:
            self.send_header('Trailer', trailer[0])
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(chunk), chunk))
        self.wfile.write(b'0\r\n')
        if trailer is not None:
            self.wfile.write(('%s: %s\r\n' % trailer).encode())
        self.wfile.write(b'\r\n')

    def do_DELETE(self):
        self.send_response(204)
        self.end_headers()

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path, _, query = self.path.partition('?')
        if path.startswith('/items/'):
            return self.body(200, json.dumps({'id': path[7:], 'name': 'Rex'}).encode())
        if path == '/no-content':
            self.protocol_version = 'HTTP/1.1'
            self.send_response(204)
            self.send_header('Connection', 'close')
            self.end_headers()
            return
        if path == '/etag':
            if self.headers.get('If-None-Match') == '"v1"':
                self.send_response(304)
                self.send_header('ETag', '"v1"')
                self.end_headers()
                return
            return self.body(200, b'versioned', 'text/plain', [('ETag', '"v1"')])
        if path == '/close-delimited':
            self.send_response(200)
            self.send_header('Content-Type', 'application/octet-stream')
            self.end_headers()
            self.wfile.write(b'x' * int(query[6:]) if query.startswith('bytes=') else b'hello')
            return
        if path == '/chunked':
            return self.chunked([b'one ', b'two ', b'three'])
        if path == '/trailers':
            return self.chunked([b'body before the trailer'], ('X-Checksum', 'abc123'))
        if path == '/early-hints':
            # 1xx answers exist from HTTP/1.1 on (RFC 9110 §15.2)
            self.protocol_version = 'HTTP/1.1'
            self.send_response_only(103)
            self.send_header('Link', '</style.css>; rel=preload; as=style')
            self.end_headers()
            return self.body(200, b'after the hints', 'text/plain')
        if path == '/continue':
            self.protocol_version = 'HTTP/1.1'
            self.send_response_only(100)
            self.end_headers()
            return self.body(200, b'after an unasked-for 100', 'text/plain')
        self.body(404, b'{"error":"not found"}')

    def do_POST(self):
        length = int(self.headers.get('Content-Length', '0'))
        data = self.rfile.read(length)
        self.body(200, json.dumps({'bytes': len(data), 'expect': self.headers.get('Expect')}).encode())

server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
print('listening on http://127.0.0.1:%d' % server.server_address[1], flush=True)
server.serve_forever()
`

/** Why Python cannot run here (undefined when it can); in CI (CI=true) its absence is an error. */
export function pythonSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (spawnSync('python3', ['--version'], { stdio: 'ignore' }).status === 0) return undefined
  const reason = 'python3 is not installed'
  if (env.CI === 'true' || env.CI === '1') throw new Error(`CI requires python3 for the upstream matrix: ${reason}`)
  return reason
}

export interface PythonUpstream {
  url: string
  /** Stops the server and resolves once it has exited. */
  stop(): Promise<void>
}

/** Starts the Python app in `dir` on a port of its choosing; resolves once it prints its address. */
export async function startPythonUpstream(dir: string): Promise<PythonUpstream> {
  const file = join(dir, 'python-upstream.py')
  writeFileSync(file, APP)
  const child: ChildProcess = spawn('python3', ['-u', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (m !== null) resolve(m[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => reject(new Error(`the Python upstream exited before it listened:\n${output}`)))
  })
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
