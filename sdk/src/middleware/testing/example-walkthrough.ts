// Runs an example app the way its README says (examples/{express,koa,fastify}/README.md, "Run it" and
// "Call it"): the real `gate sidecar` with the example's openapi.yaml, `node server.js`, then each call
// of the README, tokens issued and revoked with the `gate capability` commands. Keeps the READMEs true.
// Test support only.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Test } from 'tap'
import { call } from './http-client.js'
import { closedPortUrl, GATE_CLI, startSidecarProcess } from './sidecar-process.js'

const RECEIPT_ID = /^[0-9a-f]{64}$/

/** Runs `gate …` in `cwd` to completion; resolves with its exit code and output. */
function runGateCli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // no GATE_CONTROL_TOKEN: the README's commands read .gate/control-token from the directory
    const child = spawn(process.execPath, [GATE_CLI, ...args], { cwd, env: { ...process.env, GATE_CONTROL_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    child.once('error', reject)
    child.once('close', code => resolve({ code, stdout, stderr }))
  })
}

/**
 * Starts an example's script (`node server.js`, `node sample-api.mjs`) on a free port given as PORT, as
 * its README does, and resolves with its URL once it prints `127.0.0.1:PORT`; stopped in teardown.
 */
export async function startExampleScript(t: Test, script: string, env: Record<string, string> = {}): Promise<string> {
  const port = new URL(await closedPortUrl()).port
  const child: ChildProcess = spawn(process.execPath, [script], { cwd: dirname(script), env: { ...process.env, ...env, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      output += c.toString('utf8')
      if (output.includes(`127.0.0.1:${port}`)) resolve()
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', code => reject(new Error(`${script} exited with ${code}:\n${output}`)))
  })
  return `http://127.0.0.1:${port}`
}

/** The README walk-through of one example app, against the real sidecar. */
export async function runExampleWalkthrough(t: Test, exampleDir: string): Promise<void> {
  const dir = t.testdir()
  const sidecar = await startSidecarProcess({ dir, spec: readFileSync(join(exampleDir, 'openapi.yaml'), 'utf8'), readmeLayout: true })
  t.teardown(() => sidecar.stop())
  const appUrl = await startExampleScript(t, join(exampleDir, 'server.js'), { GATE_SIDECAR_URL: sidecar.url })
  const json = { 'content-type': 'application/json' }
  const tom = JSON.stringify({ name: 'Tom' })

  const list = await call(appUrl, 'GET', '/pets')
  t.equal(list.status, 200, 'GET /pets is allowed')
  t.match(list.headers['x-gate-receipt-id'], RECEIPT_ID, 'with the receipt id in X-Gate-Receipt-Id')
  t.equal(list.json?.receipt, list.headers['x-gate-receipt-id'], 'the handler sees the same receipt')
  const health = await call(appUrl, 'GET', '/healthz')
  t.equal(health.status, 200, 'the skipped /healthz answers')
  t.notOk('x-gate-receipt-id' in health.headers, 'without asking the sidecar')

  const refused = await call(appUrl, 'POST', '/pets', { headers: json, body: tom })
  t.equal(refused.status, 403, 'POST without a token is refused')
  t.match(refused.json, { error: 'gate_access_denied', message: 'capability required: POST /pets is deny-by-default', receipt_id: RECEIPT_ID })

  const subject = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(32))).toString('hex')
  const issued = await runGateCli(['capability', 'issue', '--subject', subject, '--grant', 'POST /pets', '--ttl', '3600', '--control-url', sidecar.url], dir)
  t.equal(issued.code, 0, `gate capability issue: ${issued.stderr}`)
  const lines = issued.stdout.trim().split('\n')
  const token = lines[lines.length - 1]!
  const capabilityId = (JSON.parse(lines.slice(0, -1).join('\n')) as { id: string }).id

  const created = await call(appUrl, 'POST', '/pets', { headers: { ...json, 'x-gate-capability': token }, body: tom })
  t.equal(created.status, 201, 'POST with the token runs the handler')
  t.equal(created.json?.pet?.name, 'Tom', 'which sees the parsed body')
  const viaQuery = await call(appUrl, 'POST', `/pets?gate_capability=${token}`, { headers: json, body: tom })
  t.equal(viaQuery.status, 201, 'the token works in the query string too')

  const revoked = await runGateCli(['capability', 'revoke', capabilityId, '--control-url', sidecar.url], dir)
  t.equal(revoked.code, 0, `gate capability revoke: ${revoked.stderr}`)
  const after = await call(appUrl, 'POST', '/pets', { headers: { ...json, 'x-gate-capability': token }, body: tom })
  t.equal(after.status, 403, 'after revocation the token is refused')
  t.match(after.json?.message, /revoked/)
}
