// The Cerbos PDP as the sidecar suite's peer: the binary npm's @cerbos/cerbos-linux-x64 ships, on
// loopback ports, telemetry off (CERBOS_NO_TELEMETRY and its configuration), audit and metrics off,
// with a policy equivalent to the suite's: GET /pets allowed to anyone, POST /pets only to a principal
// carrying the capability attribute. Driven over its HTTP API (POST /api/check/resources).
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'

const POLICY = `apiVersion: api.cerbos.dev/v1
resourcePolicy:
  version: default
  resource: pets
  rules:
    - actions: ["GET"]
      effect: EFFECT_ALLOW
      roles: ["*"]
    - actions: ["POST"]
      effect: EFFECT_ALLOW
      roles: ["*"]
      condition:
        match:
          expr: has(request.principal.attr.capability) && request.principal.attr.capability == "POST /pets"
`

/** A check request for one action on the pets resource; POST carries the attribute its rule requires. */
export function cerbosCheckBody(action: 'GET' | 'POST'): string {
  const attr = action === 'POST' ? { capability: 'POST /pets' } : {}
  return JSON.stringify({ requestId: 'bench', principal: { id: 'agent', roles: ['agent'], attr }, resources: [{ actions: [action], resource: { kind: 'pets', id: 'pets' } }] })
}

/** The Cerbos binary, or why there is none (the package exists for linux-x64 only). */
export function findCerbos(): { path: string } | { skip: string } {
  try {
    const pkg = createRequire(import.meta.url).resolve('@cerbos/cerbos-linux-x64/package.json')
    const path = join(dirname(pkg), 'cerbos-linux-x64')
    return existsSync(path) ? { path } : { skip: `${path} is missing` }
  } catch {
    return { skip: `@cerbos/cerbos-linux-x64 is not installed (a devDependency for linux-x64; this is ${process.platform}-${process.arch})` }
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Starts Cerbos with its policy in `dir`; resolves once its HTTP server says it is listening. */
export async function startCerbos(binary: string, dir: string): Promise<{ url: string; child: ChildProcess; stop(): void }> {
  mkdirSync(join(dir, 'cerbos-policies'), { recursive: true })
  writeFileSync(join(dir, 'cerbos-policies', 'pets.yaml'), POLICY)
  const [http, grpc] = [await freePort(), await freePort()]
  const config = join(dir, 'cerbos.yaml')
  writeFileSync(
    config,
    `server:\n  httpListenAddr: "127.0.0.1:${http}"\n  grpcListenAddr: "127.0.0.1:${grpc}"\n  metricsEnabled: false\n` +
      `storage:\n  driver: disk\n  disk:\n    directory: "${join(dir, 'cerbos-policies')}"\n    watchForChanges: false\n` +
      'telemetry:\n  disabled: true\naudit:\n  enabled: false\n',
  )
  const child = spawn(binary, ['server', `--config=${config}`, '--debug-listen-addr=127.0.0.1:0', '--log-level=info'], {
    env: { ...process.env, CERBOS_NO_TELEMETRY: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const url = `http://127.0.0.1:${http}`
  await new Promise<void>((resolve, reject) => {
    let out: string | undefined = ''
    // its log is read until the line that says it listens, then drained unread
    const seen = (chunk: Buffer) => {
      if (out === undefined) return
      out += chunk.toString()
      if (!out.includes(`Starting HTTP server at 127.0.0.1:${http}`)) return
      out = undefined
      resolve()
    }
    child.stdout!.on('data', seen)
    child.stderr!.on('data', seen)
    child.once('exit', code => reject(new Error(`cerbos exited ${code}: ${out?.slice(-2000) ?? ''}`)))
  })
  return { url, child, stop: () => void child.kill('SIGTERM') }
}
