// A web server from a Debian package (nginx-light, lighttpd) run for one test: found in /usr/sbin or on
// the PATH, started in the foreground with the config the caller wrote (loopback only, its own files,
// never the system's), awaited until it logs that it serves, and stopped in teardown. .ci/run installs
// the packages; without them the tests that need them are skipped with the reason, except in CI
// (CI=true), where they fail: a CI run never passes by skipping.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'

/** The binary `name` of Debian package `pkg`, or why the tests that need it skip. In CI a missing one is thrown. */
export function findDebianServer(name: string, pkg: string, env: NodeJS.ProcessEnv = process.env): { path: string } | { skip: string } {
  for (const dir of ['/usr/sbin', '/usr/local/sbin', '/usr/bin']) if (existsSync(`${dir}/${name}`)) return { path: `${dir}/${name}` }
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' })
  if (which.status === 0 && which.stdout.trim() !== '') return { path: which.stdout.trim() }
  const skip = `${name} is not installed: apt-get install --no-install-recommends ${pkg} (.ci/run does)`
  if (env.CI === 'true' || env.CI === '1') throw new Error(`CI requires ${name} for the upstream matrix: ${skip}`)
  return { skip }
}

/** A port the system calls free now (bound on 127.0.0.1 and released), for a server that cannot take port 0. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

export interface ForegroundServer {
  /** Everything it logged so far. */
  output(): string
  /** Stops it (SIGTERM) and resolves once it has exited. */
  stop(): Promise<void>
}

/**
 * Runs `binary args` in the foreground until its log matches `ready`; rejects with the log when it
 * exits first (a port taken between freeLoopbackPort and the bind, a config it refuses).
 */
export async function startForegroundServer(binary: string, args: readonly string[], ready: RegExp): Promise<ForegroundServer> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  let log = ''
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString('utf8')
      if (ready.test(log)) resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(() => reject(new Error(`${binary} exited before it served:\n${log}`)))
  })
  return {
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
