// --start-sidecar against the real gate command: sidecars started for the suite (one per nonce mode),
// every selected check run against the right one, and nothing left behind.
import { readdirSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { runAgainstStartedSidecars } from './start-sidecar.js'
import { isGateBuilt } from './testing/spawn-gate.js'

const CLI = fileURLToPath(new URL('./cli.js', import.meta.url))
const notBuilt = isGateBuilt() ? false : 'sidecar/dist is not built (run `npm run build` at the repository root)'
// in report order (CHECKS)
// (receipt.tampered-store-unsigned alters a receipt in the started sidecar's store: only this mode owns one)
const ONLY = ['evaluate.allow-safe-get', 'capabilities.valid-token-allows', 'nonces.retry-allowed', 'receipt.policy-hash', 'receipt.tampered-store-unsigned']

t.test('runAgainstStartedSidecars runs each check against the sidecar of its nonce mode and deletes both', { skip: notBuilt }, async t => {
  const tmp = t.testdir()
  const saved = process.env.TMPDIR
  process.env.TMPDIR = tmp
  t.teardown(() => {
    process.env.TMPDIR = saved
  })
  const lines: string[] = []
  const report = await runAgainstStartedSidecars({ only: ONLY, log: line => lines.push(line) })
  t.same(report.results.map(r => [r.id, r.result, r.detail]), ONLY.map(id => [id, 'PASS', null]), 'the token and store checks ran too: the sidecar has a token and a store of its own')
  t.same(report.needs, [])
  t.equal(report.ok, true)
  t.match(lines, [/^started gate sidecar on http:\/\/127\.0\.0\.1:\d+/, /^stopped gate sidecar/, /^started gate sidecar --strict-nonces on/, /^stopped gate sidecar/])
  t.same(readdirSync(tmp), [], 'their stores are gone')
})

t.test('the proxy.* checks run against gate api protect in front of a recording upstream, then both go', { skip: notBuilt }, async t => {
  const tmp = t.testdir()
  const saved = process.env.TMPDIR
  process.env.TMPDIR = tmp
  t.teardown(() => {
    process.env.TMPDIR = saved
  })
  const only = ['evaluate.path-readings-denied', 'proxy.routing-headers-dropped', 'proxy.path-variants-not-forwarded', 'proxy.format-suffix-not-forwarded']
  const lines: string[] = []
  const report = await runAgainstStartedSidecars({ only, log: line => lines.push(line) })
  t.same(report.results.map(r => [r.id, r.result, r.detail]), only.map(id => [id, 'PASS', null]))
  t.match(lines, [/^started gate sidecar on/, /^stopped gate sidecar/, /^started gate api protect on http:\/\/127\.0\.0\.1:\d+ in front of the suite's recording upstream http:\/\/127\.0\.0\.1:\d+/, /^stopped gate api protect/])
  t.same(readdirSync(tmp), [], 'its store is gone')
})

t.test('gate-conformance --start-sidecar exits 0 and says what it started; --sidecar with it is a usage error', { skip: notBuilt }, async t => {
  const tmp = t.testdir()
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>(resolve => {
      const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TMPDIR: tmp, GATE_CONTROL_TOKEN: '' } })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', c => (stdout += c))
      child.stderr.on('data', c => (stderr += c))
      child.on('close', code => resolve({ code, stdout, stderr }))
    })
  const r = await run(['--start-sidecar', '--only', 'evaluate.allow-safe-get,receipt.policy-hash', '--no-sdk'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, 'CONFORMANT')
  t.match(r.stderr, /gate-conformance: started gate sidecar on http:\/\/127\.0\.0\.1:\d+ \(document built-in, a temporary store, its own control token\)/)
  t.notMatch(r.stderr, '--strict-nonces', 'no nonce check selected: one sidecar')
  t.same(readdirSync(tmp), [])
  const both = await run(['--start-sidecar', '--sidecar', 'http://127.0.0.1:9'])
  t.equal(both.code, 2)
  t.match(both.stderr, 'give --sidecar URL or --start-sidecar, not both')
})
