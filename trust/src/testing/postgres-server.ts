// A real PostgreSQL server for tests: initdb into a fresh data directory, `postgres` on a free loopback
// port with password authentication, one fresh database per test. The binaries come from
// GATE_PG_BIN, else the Debian `postgresql` package (/usr/lib/postgresql/<version>/bin); .ci/run installs
// it. GATE_TEST_DATABASE_URL instead points the tests at a server you run yourself (a URL whose user may
// CREATE DATABASE). Without either, PostgreSQL tests are skipped with a message, except in CI (CI=true),
// where they fail: a CI run never passes by skipping them.
//
// initdb and postgres refuse to run as root, so as root they run as the `postgres` user the package
// creates (runuser), in a directory that user owns. The server never outlives the test process: it runs
// under a shell that shuts it down (fast shutdown) when its stdin, a pipe from this process, closes, and
// then deletes its data directory (unless the harness stopped it to start it again).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

const SUPERUSER = 'gate'

/** A running test server. */
export interface PostgresServer {
  /** `postgres://gate:…@127.0.0.1:PORT/` + database. */
  url(database: string): string
  /** Creates a fresh database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>
  readonly port: number
  /** Fast shutdown (clients are disconnected); resolves once it exited. */
  stop(): Promise<void>
  /** Starts it again on the same port and data (after `stop`). */
  start(): Promise<void>
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>
}

/** Where the Debian package puts each version's server binaries (/usr/lib/postgresql/<version>/bin). */
export const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql'

/** The directory of the server binaries (GATE_PG_BIN, else the newest Debian version), or undefined. */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env, root = DEBIAN_POSTGRES_ROOT): string | undefined {
  const pinned = env.GATE_PG_BIN
  if (pinned !== undefined && pinned !== '') return existsSync(join(pinned, 'initdb')) ? pinned : undefined
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter(v => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length === 0 ? undefined : join(root, versions[0]!, 'bin')
}

/**
 * Undefined when PostgreSQL tests can run here; else the reason to skip them. In CI a missing server is
 * an error (thrown), never a skip; so is a GATE_PG_BIN that names no server.
 */
export function postgresSkipReason(env: NodeJS.ProcessEnv = process.env, root = DEBIAN_POSTGRES_ROOT): string | undefined {
  if (env.GATE_TEST_DATABASE_URL !== undefined && env.GATE_TEST_DATABASE_URL !== '') return undefined
  if (findPostgresBin(env, root) !== undefined) return undefined
  const pinned = env.GATE_PG_BIN
  if (pinned !== undefined && pinned !== '') throw new Error(`GATE_PG_BIN=${pinned} holds no initdb: point it at the directory of the PostgreSQL server binaries`)
  const reason = `no PostgreSQL found in ${root}: install the Debian postgresql package (apt-get install postgresql), or set GATE_PG_BIN or GATE_TEST_DATABASE_URL (docs/postgres.md, Testing)`
  if (env.CI === 'true' || env.CI === '1') throw new Error(`CI requires PostgreSQL for these tests: ${reason}`)
  return reason
}

/** Options of `startPostgres`. */
export interface StartPostgresOptions {
  /** The loopback port to listen on; default a free one. */
  port?: number
  /** Ignore GATE_TEST_DATABASE_URL and always start a server (the developer server of dev-postgres.ts). */
  own?: boolean
}

/** Starts a server (or wraps GATE_TEST_DATABASE_URL's); call `postgresSkipReason` first. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const external = process.env.GATE_TEST_DATABASE_URL
  if (options.own !== true && external !== undefined && external !== '') return externalServer(external)
  const bin = findPostgresBin()
  if (bin === undefined) throw new Error('no PostgreSQL binaries: install the Debian postgresql package (apt-get install postgresql), or set GATE_PG_BIN to the directory holding initdb and postgres')
  const asRoot = process.getuid?.() === 0
  const dir = mkdtempSync(join(tmpdir(), 'gate-pg-'))
  const data = join(dir, 'data')
  const password = randomBytes(12).toString('hex')
  writeFileSync(join(dir, 'pw'), password + '\n', { mode: 0o600 })
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
    if (!Number.isSafeInteger(uid) || uid <= 0) throw new Error('running as root, but there is no postgres user to run PostgreSQL as')
    chownSync(dir, uid, gid)
    chownSync(join(dir, 'pw'), uid, gid)
  }
  const as = (command: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args])
  const [initCommand, initArgs] = as(join(bin, 'initdb'), ['-D', data, '-U', SUPERUSER, `--pwfile=${join(dir, 'pw')}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C', '--no-sync'])
  const init = spawnSync(initCommand, initArgs, { encoding: 'utf8' })
  if (init.status !== 0) throw new Error(`initdb failed (${init.status}): ${init.stderr}${init.stdout}`)
  const port = options.port ?? (await freePort())
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()

  const start = async (): Promise<void> => {
    // fsync off: these tests crash trust-control nodes, never the database; the server shuts down cleanly.
    const settings = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=300', '-c', 'log_min_messages=warning']
    // The shell stops the server when its stdin closes, and then deletes the directory unless told
    // "keep" (a stop before a restart). It runs in a process group of its own: a signal to this
    // process's group (a shell's `kill %1`) reaches this process, which stops it in order, and a
    // SIGKILL here closes the pipe, so the server and its data never outlive it.
    const script = `"$0" "$@" & pg=$!; read cmd; kill -INT $pg; wait $pg; [ "$cmd" = keep ] || rm -rf "${dir}"`
    const [command, args] = as('sh', ['-c', script, join(bin, 'postgres'), ...settings])
    const proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    child = proc
    exited = new Promise(resolve => proc.once('exit', () => resolve()))
    let out = ''
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        out += chunk.toString('utf8')
        if (out.includes('ready to accept connections')) resolve()
      }
      proc.stdout!.on('data', onData)
      proc.stderr!.on('data', onData)
      proc.once('exit', code => reject(new Error(`postgres exited (${code}) before it was ready:\n${out}`)))
    })
  }
  const stop = async (keep = true): Promise<void> => {
    child?.stdin?.end(keep ? 'keep\n' : '')
    await exited
    child = undefined
  }
  await start()
  const server: PostgresServer = {
    port,
    url: database => `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${database}`,
    createDatabase: prefix => createDatabase(server.url('postgres'), prefix, server.url),
    stop,
    start,
    async destroy() {
      await stop(false)
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return server
}

function externalServer(url: string): PostgresServer {
  const base = new URL(url)
  const urlOf = (database: string) => {
    const u = new URL(base)
    u.pathname = `/${database}`
    return u.toString()
  }
  const refuse = () => Promise.reject(new Error('a GATE_TEST_DATABASE_URL server cannot be stopped by the tests'))
  return {
    port: Number(base.port || 5432),
    url: urlOf,
    createDatabase: prefix => createDatabase(url, prefix, urlOf),
    stop: refuse,
    start: refuse,
    destroy: () => Promise.resolve(),
  }
}

async function createDatabase(adminUrl: string, prefix = 'gate_test', urlOf: (db: string) => string): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    // the name is generated here (prefix from the test, hex suffix), never input
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  return urlOf(name)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

