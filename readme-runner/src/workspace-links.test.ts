// The examples (and every package) use the @gate packages of this repository: each @gate dependency
// names a workspace whose version it accepts, and npm linked it there, so no @gate package can ever be
// installed from a registry (a stranger could publish one under that name).
import t from 'tap'
import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))

interface Manifest {
  name: string
  version?: string
  workspaces?: string[]
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

const read = (dir: string) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest
const workspaces = read('.').workspaces!.map(dir => ({ dir, manifest: read(dir) }))

t.test('the examples are workspaces', async t => {
  for (const example of ['examples/express', 'examples/koa', 'examples/fastify', 'examples/next']) {
    t.ok(workspaces.some(w => w.dir === example), example)
  }
})

t.test('every @gate dependency is a workspace of this repository, linked by npm', async t => {
  for (const { dir, manifest } of workspaces) {
    const deps = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies }
    for (const [name, spec] of Object.entries(deps).filter(([n]) => n.startsWith('@gate/'))) {
      const target = workspaces.find(w => w.manifest.name === name)
      t.ok(target, `${dir} depends on ${name}, a workspace`)
      t.equal(spec, target?.manifest.version, `${dir}: ${name}@${spec} is the workspace's version`)
      t.equal(realpathSync(join(root, 'node_modules', name)), realpathSync(join(root, target!.dir)), `${name} is linked to ${target?.dir}`)
    }
  }
})
