// nginx as the benchmark's native reverse-proxy reference: found on PATH or in /usr/sbin, installed
// with apt-get (nginx-light) only when missing and possible, and run in the foreground with a config
// written to a temporary directory: 127.0.0.1 only, one worker (the Node proxies are one event loop
// each), access log off, upstream keep-alive. Never a system daemon.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type NginxBinary = { path: string } | { skip: string }

/** The nginx binary, installing nginx-light when it is missing and apt-get can run (root). */
export function findOrInstallNginx(log: (line: string) => void): NginxBinary {
  const found = locate()
  if (found !== undefined) return { path: found }
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return { skip: 'nginx is not installed and apt-get is not available as root' }
  log('nginx not found; installing nginx-light with apt-get (benchmark reference only)')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  // policy-rc.d exit 101 keeps the package from starting a system nginx on 0.0.0.0:80 while it
  // installs (the benchmark's nginx listens on 127.0.0.1 only); removed again if we created it
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = !existsSync(policy)
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 })
  let r
  try {
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'nginx-light'], { env, encoding: 'utf8', timeout: 300_000 })
    if (r.status !== 0) {
      spawnSync('apt-get', ['update'], { env, encoding: 'utf8', timeout: 300_000 })
      r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'nginx-light'], { env, encoding: 'utf8', timeout: 300_000 })
    }
  } finally {
    if (ownPolicy) rmSync(policy, { force: true })
  }
  const installed = locate()
  if (installed === undefined) return { skip: `nginx could not be installed: ${(r.stderr ?? '').trim().split('\n').slice(-1)[0] ?? `exit ${r.status}`}` }
  return { path: installed }
}

function locate(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx', '/usr/local/nginx/sbin/nginx']) if (existsSync(p)) return p
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' })
  return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : undefined
}

export interface RunningNginx {
  url: string
  stop(): Promise<void>
}

/** Runs nginx in the foreground proxying 127.0.0.1:{port} → `upstreamPort`. */
export async function startNginx(binary: string, upstreamPort: number): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-bench-nginx-'))
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) mkdirSync(join(dir, sub))
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    `worker_processes 1;
error_log ${dir}/logs/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  upstream bench_upstream { server 127.0.0.1:${upstreamPort}; keepalive 128; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  )
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  await waitForPort(port, exited, () => stderr)
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const address = s.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      s.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, exited: Promise<void>, stderr: () => string): Promise<void> {
  let dead = false
  void exited.then(() => (dead = true))
  for (let i = 0; i < 100; i++) {
    if (dead) throw new Error(`nginx exited: ${stderr()}`)
    const ok = await new Promise<boolean>(resolve => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`nginx did not start listening on 127.0.0.1:${port}: ${stderr()}`)
}
