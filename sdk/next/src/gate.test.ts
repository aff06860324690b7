// @gate/next end to end: examples/next is built once with `next build` (its middleware.js runs
// gateMiddleware on the edge runtime, its route handlers use withGate), then started with `next start`
// per case, in front of the real `gate sidecar` (and the fake sidecar for faults).
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { closedPortUrl, runAdapterSuite, type StartApp } from '@gate/sdk/middleware-testing'

// one `next build` plus two dozen `next start`s: longer than the default per-file timeout
t.setTimeout(900_000)

const exampleDir = fileURLToPath(new URL('../../../examples/next/', import.meta.url))
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' }

// examples/next is a workspace: `npm ci` installs its next, react and react-dom
const nextBin = join(dirname(createRequire(join(exampleDir, 'package.json')).resolve('next/package.json')), 'dist', 'bin', 'next')
const build = spawnSync(process.execPath, [nextBin, 'build'], { cwd: exampleDir, env, encoding: 'utf8', timeout: 600_000 })
if (build.status !== 0) {
  t.fail(`next build failed (${build.status}):\n${build.stdout}\n${build.stderr}`)
  process.exit()
}

/** The options the example reads from its environment (examples/next/gate-options.js). */
const OPTION_ENV: Record<string, string> = {
  sidecarUrl: 'GATE_SIDECAR_URL',
  sidecarPublicKey: 'GATE_SIDECAR_PUBLIC_KEY',
  onSidecarError: 'GATE_ON_SIDECAR_ERROR',
  timeoutMs: 'GATE_TIMEOUT_MS',
  maxBodyBytes: 'GATE_MAX_BODY_BYTES',
  identityCookie: 'GATE_IDENTITY_COOKIE',
}

const startApp: StartApp = async options => {
  const appEnv: Record<string, string | undefined> = { ...env, GATE_SIDECAR_URL: undefined }
  for (const [key, value] of Object.entries(options)) {
    if (key === 'skip') continue // fixed in the example: /healthz and /edge/healthz
    const name = OPTION_ENV[key]
    if (name === undefined) throw new Error(`the Next example takes no option ${key}`)
    appEnv[name] = String(value)
  }
  const port = Number(new URL(await closedPortUrl()).port)
  const child = spawn(process.execPath, [nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], { cwd: exampleDir, env: appEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.includes('Ready')) resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', code => reject(new Error(`next start exited with ${code}:\n${output}`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      process.kill(-(child.pid as number), 'SIGTERM')
      await exited
    },
  }
}

await runAdapterSuite(t, 'next withGate', startApp, { keepsFieldLines: false })
// route handlers run on Node and reach the sidecar over its socket; the edge middleware keeps fetch over TCP
await runAdapterSuite(t, 'next withGate', startApp, { keepsFieldLines: false, transport: 'unix' })
await runAdapterSuite(t, 'next edge middleware', startApp, { prefix: '/edge', stripsQueryToken: false, keepsFieldLines: false })
