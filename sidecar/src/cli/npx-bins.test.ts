// The commands the README runs through npx: `npm ci` links node_modules/.bin/gate and
// gate-conformance to committed entry files (sidecar/bin, conformance/bin), so npx runs the local
// build and never asks the registry, and an entry run before `npm run build` says what to do.
import t from 'tap'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', c => (stdout += c))
    child.stderr.on('data', c => (stderr += c))
    child.once('error', reject)
    child.once('close', code => resolve({ code, stdout, stderr }))
  })
}

// A registry nothing listens on: any lookup fails instead of downloading a stranger's package.
const OFFLINE = { npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false', npm_config_yes: 'true' }

t.test('npx gate and npx gate-conformance run the local build, never the registry', async t => {
  const gate = await run('npx', ['gate', '--help'], OFFLINE)
  t.equal(gate.code, 0, gate.stderr)
  t.match(gate.stdout, 'Usage: gate <command>')
  const conformance = await run('npx', ['gate-conformance', '--help'], OFFLINE)
  t.equal(conformance.code, 0, conformance.stderr)
  t.match(conformance.stdout, 'Usage: gate-conformance')
})

t.test('an entry run before the build exits 1 saying to run npm run build', async t => {
  const dir = t.testdir()
  for (const [pkg, file, name] of [['sidecar', 'gate.js', 'gate'], ['conformance', 'gate-conformance.js', 'gate-conformance']] as const) {
    // the entry as committed, in a package folder without dist/
    mkdirSync(join(dir, pkg, 'bin'), { recursive: true })
    writeFileSync(join(dir, pkg, 'package.json'), '{"type":"module"}')
    copyFileSync(join(root, pkg, 'bin', file), join(dir, pkg, 'bin', file))
    const r = await run(process.execPath, [join(dir, pkg, 'bin', file), '--help'])
    t.equal(r.code, 1, name)
    t.match(r.stderr, `${name}: the command is not built yet (${pkg}/dist is missing): run \`npm run build\` in the repository root`)
  }
})
