// nginx (Debian's nginx-light) as an upstream of `gate api protect` (the upstream matrix,
// cli/api-protect-upstreams.test.ts): static files and nginx's own answers, from a config of its own in
// the test's directory (foreground, 127.0.0.1 only, its own pid and temp files).
//
//   GET    /items/{id}                 a static JSON file (Content-Length, ETag, Last-Modified
//                                      LAST_MODIFIED: If-Modified-Since with it is a 304); HEAD the same
//   DELETE /items/{id}                 `return 204`
//   GET    /no-content                 `return 204`, kept alive
//   GET    /closing/no-content         `return 204` with `Connection: close` (keepalive_timeout 0)
//   GET    /gzip/lorem.txt             gzip-compressed (send Accept-Encoding: gzip): chunked, with a
//                                      trailer (add_trailer)
//   GET    /close-delimited/lorem.txt  gzip-compressed without chunking: the body ends at the close
//   GET    /big.bin                    2 MiB static file
//   POST   /upload                     `return 200 'received'` (nginx reads and drops the body)
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freeLoopbackPort, startForegroundServer, type ForegroundServer } from './debian-server.js'

/** The Last-Modified of the static items (a conditional GET with it is answered 304). */
export const LAST_MODIFIED = 'Thu, 01 Jan 2026 00:00:00 GMT'
/** The text file nginx serves compressed. */
export const LOREM = 'Gate sits in front of this upstream and relays what nginx sends.\n'.repeat(200)

export interface NginxUpstream extends ForegroundServer {
  url: string
}

/** Starts nginx (`binary`) serving from `dir`; resolves once its worker runs. */
export async function startNginxUpstream(binary: string, dir: string): Promise<NginxUpstream> {
  const www = join(dir, 'www')
  for (const sub of ['items', 'gzip', 'close-delimited']) mkdirSync(join(www, sub), { recursive: true })
  mkdirSync(join(dir, 'temp'), { recursive: true })
  for (const id of ['1', '2', '7']) {
    const file = join(www, 'items', id)
    writeFileSync(file, JSON.stringify({ id, name: 'Rex' }))
    const mtime = new Date(LAST_MODIFIED)
    utimesSync(file, mtime, mtime)
  }
  writeFileSync(join(www, 'gzip', 'lorem.txt'), LOREM)
  writeFileSync(join(www, 'close-delimited', 'lorem.txt'), LOREM)
  writeFileSync(join(www, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 0x61))
  const port = await freeLoopbackPort()
  const temp = join(dir, 'temp')
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    `worker_processes 1;
error_log stderr notice;
pid ${join(dir, 'nginx.pid')};
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${temp};
  proxy_temp_path ${temp};
  fastcgi_temp_path ${temp};
  uwsgi_temp_path ${temp};
  scgi_temp_path ${temp};
  types { text/plain txt; }
  default_type application/json;
  server {
    listen 127.0.0.1:${port};
    root ${www};
    location /items/ { if ($request_method = DELETE) { return 204; } }
    location = /no-content { return 204; }
    location = /upload { return 200 'received'; }
    location = /closing/no-content { keepalive_timeout 0; return 204; }
    location /gzip/ { gzip on; gzip_min_length 1; gzip_types text/plain; add_trailer X-Checksum abc123; }
    location /close-delimited/ { gzip on; gzip_min_length 1; gzip_types text/plain; chunked_transfer_encoding off; }
  }
}
`,
  )
  const server = await startForegroundServer(binary, ['-e', 'stderr', '-p', dir, '-c', conf, '-g', 'daemon off;'], /start worker process \d+/)
  return { ...server, url: `http://127.0.0.1:${port}` }
}
