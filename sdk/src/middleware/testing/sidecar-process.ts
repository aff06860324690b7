// Runs the real `gate sidecar` process for end-to-end tests: a free port (`--listen 127.0.0.1:0`) or a
// Unix socket (`--listen unix:PATH`), the pets spec in a temp file, a durable receipt store in the
// test's directory, and a control token so the test can issue and revoke capabilities through /v1:
// given in GATE_CONTROL_TOKEN, or, as the READMEs run it, the one the sidecar writes to
// .gate/control-token in its working directory. Test support only.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HttpReceipt, VerifyReceiptResponse } from '../../types.js'
import { UNIX_PREFIX } from '../sidecar-url.js'
import { call } from './http-client.js'
import { PETS_SPEC_YAML } from './pets-spec.js'
import { socketDirectory, type TestTransport } from './test-listen.js'

/** The `gate` CLI (override with GATE_CLI for an installed build). */
export const GATE_CLI = process.env.GATE_CLI ?? fileURLToPath(new URL('../../../../sidecar/dist/cli/main.js', import.meta.url))

export interface SidecarProcess {
  /** `http://127.0.0.1:PORT`, or `unix:PATH` when started on a socket. */
  url: string
  /** The GATE_CONTROL_TOKEN it was started with (for `gate capability …` against it). */
  controlToken: string
  /** Issues a capability for `grants` ("POST /pets") to a fresh subject; returns the token JSON text. */
  issue(grants: string[], ttlSeconds?: number): Promise<{ token: string; id: string }>
  revoke(capabilityId: string): Promise<void>
  verify(receipt: HttpReceipt): Promise<VerifyReceiptResponse>
  /** Everything the process wrote, for failure messages. */
  output(): string
  stop(): Promise<void>
}

export interface SidecarProcessOptions {
  /** Directory for the spec file and the receipt store (t.testdir()). */
  dir: string
  spec?: string
  extraArgs?: string[]
  /** Listen on TCP (default) or a Unix socket. */
  transport?: TestTransport
  /**
   * Run as the examples' READMEs do: the store in `dir/.gate/receipts.db` and no GATE_CONTROL_TOKEN, so
   * the sidecar creates `dir/.gate/control-token` (read back for `controlToken`), which `gate` commands
   * run in `dir` find by themselves. The sidecar's own working directory stays the test's: tap removes
   * `dir` before teardowns stop the sidecar, and a process whose working directory is gone cannot
   * start its worker threads (ENOENT from uv_cwd) on the way down.
   */
  readmeLayout?: boolean
  /** Extra environment (e.g. OTEL_EXPORTER_OTLP_ENDPOINT). */
  env?: NodeJS.ProcessEnv
}

/** True when the sidecar build exists (tests skip with a reason otherwise). */
export function hasSidecarBuild(): boolean {
  return existsSync(GATE_CLI)
}

/** Spawns `gate sidecar` and resolves once it prints its listen address. */
export async function startSidecarProcess(options: SidecarProcessOptions): Promise<SidecarProcess> {
  const specFile = join(options.dir, 'pets.yaml')
  writeFileSync(specFile, options.spec ?? PETS_SPEC_YAML)
  const readme = options.readmeLayout === true
  // the token rule: at least 16 characters (a short random suffix once broke it)
  let controlToken = readme ? '' : `test-control-${randomUUID()}`
  const socket = options.transport === 'unix' ? socketDirectory() : undefined
  const listen = socket === undefined ? '127.0.0.1:0' : `${UNIX_PREFIX}${join(socket.dir, 'gate.sock')}`
  const child = spawn(
    process.execPath,
    [GATE_CLI, 'sidecar', '--listen', listen, '--spec', specFile, '--receipt-store', join(options.dir, readme ? '.gate' : '', 'receipts.db'), ...(options.extraArgs ?? [])],
    { env: { ...process.env, ...options.env, GATE_CONTROL_TOKEN: controlToken, GATE_SIDECAR_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const m = socket === undefined ? /(?:https?:\/\/)?(127\.0\.0\.1):(\d{2,5})\b/.exec(output) : /listening on (unix:[^\s"]+)/.exec(output)
      if (m !== null && m[2] !== '0') {
        child.stdout?.off('data', onData)
        child.stderr?.off('data', onData)
        resolve(socket === undefined ? `http://127.0.0.1:${m[2]}` : (m[1] as string))
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', code => reject(new Error(`gate sidecar exited with ${code} before listening:\n${output}`)))
    child.once('error', reject)
  })
  child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')))
  child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')))
  // the file exists before the sidecar listens
  if (readme) controlToken = readFileSync(join(options.dir, '.gate', 'control-token'), 'utf8').trim()
  const control = async (path: string, body: unknown): Promise<unknown> => {
    const res = await call(url, 'POST', path, { headers: { 'content-type': 'application/json', authorization: `Bearer ${controlToken}` }, body: JSON.stringify(body) })
    if (res.status !== 200) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`)
    return res.json
  }
  return {
    url,
    controlToken,
    async issue(grants, ttlSeconds = 3600) {
      const subjectPublicKey = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString('hex')
      const scope = { grants: grants.map(tool_name => ({ server_id: 'http', tool_name })) }
      const { capability } = (await control('/v1/capabilities/issue', { subjectPublicKey, scope, ttlSeconds })) as { capability: { id: string } }
      return { token: JSON.stringify(capability), id: capability.id }
    },
    async revoke(capabilityId) {
      await control('/v1/revocations', { capabilityId })
    },
    async verify(receipt) {
      return (await call(url, 'POST', '/gate/verify', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(receipt) })).json as VerifyReceiptResponse
    },
    output: () => output,
    async stop() {
      await stopChild(child)
      socket?.remove()
    },
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

/** A sidecar URL on which nothing listens: a released loopback port, or a socket path in an empty directory. */
export async function unreachableSidecarUrl(transport: TestTransport = 'tcp'): Promise<string> {
  if (transport === 'tcp') return closedPortUrl()
  // in a directory that is gone again: connecting fails with ENOENT, like a sidecar not started yet
  const socket = socketDirectory()
  socket.remove()
  return `${UNIX_PREFIX}${join(socket.dir, 'nobody.sock')}`
}

/** A loopback URL on which nothing listens (the port was bound, read back and released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return `http://127.0.0.1:${port}`
}
