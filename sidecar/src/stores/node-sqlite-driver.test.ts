// The node:sqlite driver. This machine's Node 20 has no node:sqlite, so the driver and store suites are
// re-run under the Node 24 binary named by GATE_NODE24 (the CI installs one), with
// GATE_STORE_DRIVER=node:sqlite, each over the compiled dist; so are the two kill tests, whose `gate`
// processes then run on Node 24 and store through node:sqlite (its write path differs: multi-row
// VALUES in a transaction). Without GATE_NODE24 they skip, saying so.
import t from 'tap'
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadNodeSqlite } from './node-sqlite-driver.js'

const here = dirname(fileURLToPath(import.meta.url))
const self = basename(fileURLToPath(import.meta.url))
const node24 = process.env['GATE_NODE24']

function run(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('close', code => resolve({ code, output }))
  })
}

t.test('the driver module loads on every runtime and reports whether node:sqlite exists', async t => {
  const sqlite = loadNodeSqlite()
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
  if (major > 22 || (major === 22 && minor >= 13)) t.ok(sqlite, `Node ${process.versions.node} has node:sqlite`)
  else if (major < 22) t.equal(sqlite, undefined, `Node ${process.versions.node} has no node:sqlite`)
  else t.pass(`Node ${process.versions.node}: node:sqlite ${sqlite === undefined ? 'absent (needs a flag)' : 'present'}`)
})

const skip =
  node24 === undefined || node24 === ''
    ? 'GATE_NODE24 is not set: the node:sqlite re-run of the store suites is skipped (point it at a Node 24 binary, as .ci/run does)'
    : false

/** `gate` kill -9 tests (sidecar and api protect), whose durability the write path must keep. */
const KILL_TESTS = ['sidecar-kill.test.js', 'api-protect-kill.test.js'].map(name => join(here, '..', 'cli', name))

t.test('the store suites and the kill tests pass on node:sqlite under GATE_NODE24', { skip }, async t => {
  if (node24 === undefined) return
  const probe = await run(node24, ['-p', "typeof process.getBuiltinModule?.('node:sqlite')?.DatabaseSync"], process.env)
  if (probe.code !== 0 || probe.output.trim() !== 'function') {
    t.fail(`GATE_NODE24=${node24} is not a Node with node:sqlite: ${probe.output.trim()}`)
    return
  }
  const stores = readdirSync(here).filter(name => name.endsWith('.test.js') && name !== self).sort()
  t.ok(stores.length > 5, 'found the store suites')
  const suites = [...stores.map(name => join(here, name)), ...KILL_TESTS]
  // Each suite runs in its own Node 24 process, as a plain script: without the runner's TAP_* and
  // NODE_OPTIONS (its loader hooks), and with GATE_NODE24 cleared so none of them recurses here.
  const env: NodeJS.ProcessEnv = { GATE_STORE_DRIVER: 'node:sqlite', GATE_NODE24: '' }
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('TAP') && key !== 'NODE_OPTIONS' && !(key in env)) env[key] = value
  }
  for (const suite of suites) {
    // The extra argument names the run: tap puts a script's arguments into its fixture directory's
    // name, so these runs never share t.testdir() with the same suite running beside them (tap runs
    // files in parallel).
    const { code, output } = await run(node24, [suite, 'on-node-sqlite'], env)
    const failure = output.search(/^\s*not ok/m)
    const excerpt = failure === -1 ? output.slice(-4000) : output.slice(Math.max(0, failure - 500), failure + 3500)
    const name = basename(suite)
    t.equal(code, 0, `${name} on node:sqlite`, code === 0 ? {} : { diagnostic: true, output: excerpt })
    t.notMatch(output, /^not ok/m, `${name} reports no failure`)
  }
})
