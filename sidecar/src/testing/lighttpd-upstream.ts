// lighttpd (Debian's lighttpd) as an upstream of `gate api protect` (the upstream matrix,
// cli/api-protect-upstreams.test.ts): static files and CGI scripts from a config of its own in the
// test's directory (foreground, 127.0.0.1 only).
//
//   GET    /items.json                  static JSON (Content-Length, ETag, Last-Modified LAST_MODIFIED);
//                                       HEAD the same; If-Modified-Since with it is a 304
//   GET    /closing/items.json          the same with `Connection: close` (no keep-alive there)
//   any    /cgi/no-content.cgi          a CGI answering `Status: 204`
//   GET    /cgi/stream.cgi              a CGI writing 1 MB as it goes: streamed to the proxy chunked
import { chmodSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freeLoopbackPort, startForegroundServer, type ForegroundServer } from './debian-server.js'
import { LAST_MODIFIED } from './nginx-upstream.js'

/** The bytes /cgi/stream.cgi writes. */
export const STREAM_BYTES = 1_000_000

export interface LighttpdUpstream extends ForegroundServer {
  url: string
}

/** Starts lighttpd (`binary`) serving from `dir`; resolves once it says it started. */
export async function startLighttpdUpstream(binary: string, dir: string): Promise<LighttpdUpstream> {
  const www = join(dir, 'www')
  for (const sub of ['cgi', 'closing']) mkdirSync(join(www, sub), { recursive: true })
  for (const file of [join(www, 'items.json'), join(www, 'closing', 'items.json')]) {
    writeFileSync(file, '{"id":"1","name":"Rex"}')
    const mtime = new Date(LAST_MODIFIED)
    utimesSync(file, mtime, mtime)
  }
  const script = (name: string, body: string) => {
    writeFileSync(join(www, 'cgi', name), `#!/bin/sh\n${body}\n`)
    chmodSync(join(www, 'cgi', name), 0o755)
  }
  script('no-content.cgi', String.raw`printf 'Status: 204\r\n\r\n'`)
  script('stream.cgi', String.raw`printf 'Content-Type: text/plain\r\n\r\n'; head -c ${STREAM_BYTES} /dev/zero | tr '\0' x`)
  const port = await freeLoopbackPort()
  const conf = join(dir, 'lighttpd.conf')
  writeFileSync(
    conf,
    `server.document-root = "${www}"
server.bind = "127.0.0.1"
server.port = ${port}
server.modules = ("mod_cgi")
server.stream-response-body = 2
mimetype.assign = (".json" => "application/json", ".txt" => "text/plain")
cgi.assign = (".cgi" => "/bin/sh")
$HTTP["url"] =~ "^/closing/" { server.max-keep-alive-requests = 0 }
`,
  )
  const server = await startForegroundServer(binary, ['-D', '-f', conf], /server started/)
  return { ...server, url: `http://127.0.0.1:${port}` }
}
