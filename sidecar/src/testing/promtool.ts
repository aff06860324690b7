// Prometheus's own linter for end-to-end tests: `promtool check metrics` reads an exposition on stdin
// and exits 0 with no output only when it parses and every lint rule holds (docs/observability.md).
// The Debian package `prometheus` ships it (.ci/run installs it). Without it the tests that need it are
// skipped with a message, except in CI (CI=true), where they fail: a CI run never passes by skipping.
import { spawn, spawnSync } from 'node:child_process'

/** The promtool command: GATE_PROMTOOL, else `promtool` on PATH. */
export function promtoolCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.GATE_PROMTOOL !== undefined && env.GATE_PROMTOOL !== '' ? env.GATE_PROMTOOL : 'promtool'
}

/** Undefined when promtool runs here; else the reason to skip. In CI a missing promtool is an error (thrown). */
export function promtoolSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const command = promtoolCommand(env)
  const probe = spawnSync(command, ['--version'], { stdio: 'ignore' })
  if (probe.error === undefined && probe.status === 0) return undefined
  const reason = `${command} does not run (${probe.error?.message ?? `exit ${probe.status}`}): install the Debian prometheus package (apt-get install --no-install-recommends prometheus) or set GATE_PROMTOOL`
  if (env.CI === 'true' || env.CI === '1') throw new Error(`CI requires promtool for these tests: ${reason}`)
  return reason
}

/** Runs `promtool check metrics` over `exposition`; resolves with its exit code and everything it printed. */
export function checkMetrics(exposition: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolCommand(env), ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.once('error', reject)
    child.once('close', code => resolve({ code, output }))
    child.stdin.end(exposition)
  })
}
