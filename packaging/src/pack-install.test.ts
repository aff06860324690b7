// Gate in someone else's project (issue 45), the slow one of the suite (about 40 s; tap runs it beside
// other files): every publishable package packed with `npm pack`, each tarball checked (its built
// files, types, `exports` and `bin` targets, README and LICENSE; internal dependencies by exact
// version), then all of them installed into a fresh project in the system's temp directory, outside
// this workspace, with `npm install --offline` (offline-lockfile.ts: nothing but what `npm ci` put
// in npm's cache). There, `npx gate --help`, `npx gate sidecar` and an Express app using
// `@gate/express` against that sidecar: a GET allowed with its receipt, a POST denied.
//
// The sqlite3 addon: npm installs here with --ignore-scripts and the workspace's addon, built by the
// same install script (`npm rebuild` in .ci/run), is copied in, which saves the two to three minutes
// its source build takes on one core. GATE_PACK_TEST_BUILD_SQLITE=1 builds it from source instead.
import t, { type Test } from 'tap'
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freshProjectFiles } from './offline-lockfile.js'
import { packAll } from './pack-all.js'
import { publishablePackages } from './publishable.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'pack-install-control-token-0123456789'
// npm never reaches a registry here: offline, it takes packuments and tarballs from its cache only,
// under the registry `npm ci` used (the cache is keyed by the registry's URL)
const OFFLINE: NodeJS.ProcessEnv = { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' }
for (const name of Object.keys(OFFLINE)) if (name.startsWith('GATE_') || name === 'npm_config_prefix') delete OFFLINE[name]

const SPEC = `openapi: 3.0.3
info: { title: my pets, version: '1' }
paths:
  /pets:
    get: { responses: { '200': { description: the pets } } }
    post: { responses: { '201': { description: a pet } } }
`

const APP = `import express from 'express'
import { gate } from '@gate/express'

const app = express()
app.use(gate())
app.get('/pets', (req, res) => res.json({ pets: [], receipt: req.gate.receipt.id }))
app.post('/pets', (req, res) => res.status(201).json({ created: true }))
const server = app.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port))
`

const packages = publishablePackages(ROOT)
const work = mkdtempSync(join(tmpdir(), 'gate-pack-install-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const tarballs = packAll(join(work, 'packages'))
const LICENSE = readFileSync(join(ROOT, 'LICENSE'), 'utf8')

t.test('every package packs with its built files, types, exports, bin, README and LICENSE', async t => {
  t.equal(tarballs.length, packages.length)
  packages.forEach((pkg, i) => {
    const tarball = tarballs[i]!
    const files = new Set(execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(f => f !== ''))
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as {
      exports?: Record<string, string | Record<string, string>>
      bin?: Record<string, string>
      main?: string
      types?: string
      dependencies?: Record<string, string>
    }
    const has = (path: string) => files.has(`package/${path.replace(/^\.\//, '')}`)
    t.ok(has('README.md'), `${pkg.name}: README.md`)
    t.equal(execFileSync('tar', ['-xzOf', tarball, 'package/LICENSE'], { encoding: 'utf8' }), LICENSE, `${pkg.name}: LICENSE (Apache-2.0, the repository's)`)
    for (const field of [manifest.main, manifest.types]) if (field !== undefined) t.ok(has(field), `${pkg.name}: ${field}`)
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      for (const file of typeof target === 'string' ? [target] : Object.values(target)) t.ok(has(file), `${pkg.name} exports ${subpath}: ${file}`)
    }
    for (const [bin, file] of Object.entries(manifest.bin ?? {})) t.ok(has(file), `${pkg.name} bin ${bin}: ${file}`)
    t.notOk([...files].some(f => /\.test\.[cm]?js$/.test(f)), `${pkg.name}: no compiled tests`)
    for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
      if (!dep.startsWith('@gate/')) continue
      const internal = packages.find(p => p.name === dep)
      t.equal(range, internal?.version, `${pkg.name} depends on ${dep} by its version`)
    }
  })
})

t.test('the README installs exactly the packages @gate/sidecar and @gate/express need', async t => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const listed = /gate-\{([a-z,]+)\}-[0-9.]+\.tgz/.exec(readme)?.[1]?.split(',').map(name => `@gate/${name}`)
  const needed = new Set<string>()
  const visit = (name: string) => {
    if (needed.has(name)) return
    needed.add(name)
    const dir = packages.find(p => p.name === name)?.dir
    const manifest = JSON.parse(readFileSync(join(ROOT, dir!, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }
    for (const dep of Object.keys(manifest.dependencies ?? {})) if (dep.startsWith('@gate/')) visit(dep)
  }
  visit('@gate/sidecar')
  visit('@gate/express')
  t.same(new Set(listed), needed, 'the npm install line of "Gate in your own project"')
})

t.test('installed from the tarballs in a fresh project: npx gate, gate sidecar and an Express app', async t => {
  const project = join(work, 'my-app')
  mkdirSync(project)
  t.ok(relative(ROOT, realpathSync(project)).startsWith('..'), 'the project is outside the workspace')
  const { overrides } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { overrides?: object }
  const { packageJson, lockfile } = freshProjectFiles(join(ROOT, 'package-lock.json'), overrides, {
    dir: project,
    name: 'my-app',
    tarballs: new Map(packages.map((p, i) => [p.name, tarballs[i]!])),
    registryDependencies: ['express'],
  })
  writeFileSync(join(project, 'package.json'), JSON.stringify(packageJson, null, 2))
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lockfile, null, 2))
  writeFileSync(join(project, 'openapi.yaml'), SPEC)
  writeFileSync(join(project, 'server.js'), APP)

  const install = spawnSync('npm', ['install', '--ignore-scripts'], { cwd: project, env: OFFLINE, encoding: 'utf8' })
  t.equal(install.status, 0, `npm install --offline from the tarballs:\n${install.stdout}${install.stderr}`)
  if (install.status !== 0) return
  const sqlite3 = join(project, 'node_modules', 'sqlite3')
  if (process.env.GATE_PACK_TEST_BUILD_SQLITE === '1') {
    const build = spawnSync('npm', ['rebuild', 'sqlite3'], { cwd: project, env: { ...OFFLINE, npm_config_build_from_source: 'true', JOBS: 'max' }, encoding: 'utf8' })
    t.equal(build.status, 0, `the sqlite3 addon builds from source:\n${build.stderr}`)
  } else {
    const version = (dir: string) => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
    t.equal(version(sqlite3), version(join(ROOT, 'node_modules', 'sqlite3')), 'the same sqlite3 as the workspace')
    mkdirSync(join(sqlite3, 'build', 'Release'), { recursive: true })
    copyFileSync(join(ROOT, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node'), join(sqlite3, 'build', 'Release', 'node_sqlite3.node'))
  }
  t.ok(realpathSync(join(project, 'node_modules', '.bin', 'gate')).startsWith(realpathSync(project)), 'npx finds the project\'s own gate')

  const help = spawnSync('npx', ['gate', '--help'], { cwd: project, env: OFFLINE, encoding: 'utf8' })
  t.equal(help.status, 0, `npx gate --help:\n${help.stderr}`)
  t.match(help.stdout, /^Usage: gate /m)

  const env = { ...OFFLINE, GATE_CONTROL_TOKEN: TOKEN }
  const sidecar = await startUntilListening(t, 'npx', ['gate', 'sidecar', '--spec', 'openapi.yaml', '--listen', '127.0.0.1:0', '--receipt-store', '.gate/receipts.db'], project, env)
  const app = await startUntilListening(t, 'node', ['server.js'], project, { ...env, GATE_SIDECAR_URL: sidecar })

  const get = await fetch(`${app}/pets`)
  const body = (await get.json()) as { receipt: string }
  t.equal(get.status, 200, 'GET /pets: allowed by the safe-method rule')
  t.match(body.receipt, /^[0-9a-f]{64}$/)
  t.equal(get.headers.get('x-gate-receipt-id'), body.receipt, 'the receipt id the handler saw is the one the client got')
  const post = await fetch(`${app}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Tom"}' })
  t.equal(post.status, 403, 'POST /pets without a capability: denied')
  t.match(await post.json(), { error: 'gate_access_denied', message: 'capability required: POST /pets is deny-by-default' })
})

/** Starts `command` in its own process group and resolves with the URL of its "listening on" line. */
function startUntilListening(t: Test, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child: ChildProcess = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  t.teardown(async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      // already gone
    }
    await exited
  })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} did not listen within 60 s:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (m === null) return
      clearTimeout(timer)
      resolve(m[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`${command} ${args.join(' ')} exited before it listened:\n${output}`))
    })
  })
}
