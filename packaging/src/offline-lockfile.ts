// A package-lock.json for a fresh project that installs Gate's tarballs, so that `npm install
// --offline` needs nothing the repository's own `npm ci` did not already put in npm's cache: every
// third-party package at the version and with the integrity the repository's lockfile pins (`npm ci`
// fetched exactly these, their metadata included, since the lockfile records no tarball URLs), and
// Gate's packages from the tarball files. Without it npm would resolve every range afresh, against
// metadata newer than the cache holds. The tree is the repository's: its root node_modules as they
// are, a workspace's own nested ones under the package's folder; npm prunes what the project does not
// need. The repository's `overrides` go into the project's package.json: the pinned versions obey them.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

interface LockEntry {
  name?: string
  version?: string
  resolved?: string
  integrity?: string
  link?: boolean
  dev?: boolean
  devOptional?: boolean
  optional?: boolean
  peer?: boolean
  [key: string]: unknown
}

interface Lockfile {
  lockfileVersion: number
  packages: Record<string, LockEntry>
}

/** What the fresh project depends on. */
export interface FreshProject {
  /** The project's directory (tarball paths are recorded relative to it). */
  dir: string
  name: string
  /** Gate's tarballs: package name → tarball path. */
  tarballs: ReadonlyMap<string, string>
  /** Other dependencies, by name: each must be in the repository's lockfile, whose version is used. */
  registryDependencies: readonly string[]
}

/**
 * The project's package.json and package-lock.json, from the repository's lockfile at `lockPath` and
 * its package.json's `overrides` (which the pinned versions obey).
 */
export function freshProjectFiles(lockPath: string, overrides: object | undefined, project: FreshProject): { packageJson: object; lockfile: object } {
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as Lockfile
  if (lock.lockfileVersion !== 3) throw new Error(`${lockPath}: lockfileVersion ${lock.lockfileVersion}, expected 3`)
  // workspace folder → package name, from the links npm records for them
  const workspaces = new Map<string, string>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (entry.link === true && typeof entry.resolved === 'string' && path.startsWith('node_modules/')) workspaces.set(entry.resolved, path.slice('node_modules/'.length))
  }
  const dependencies: Record<string, string> = {}
  const packages: Record<string, LockEntry> = {}
  for (const [name, tarball] of project.tarballs) {
    const spec = `file:${relative(project.dir, tarball)}`
    dependencies[name] = spec
    const dir = [...workspaces].find(([, n]) => n === name)?.[0]
    const workspace = dir === undefined ? undefined : lock.packages[dir]
    if (workspace === undefined) throw new Error(`${name} is not a workspace of ${lockPath}`)
    const { name: _name, devDependencies: _dev, ...rest } = workspace
    packages[`node_modules/${name}`] = { ...rest, resolved: spec, integrity: integrityOf(tarball) }
  }
  for (const name of project.registryDependencies) {
    const entry = lock.packages[`node_modules/${name}`]
    if (entry?.version === undefined) throw new Error(`${name} is not in ${lockPath}`)
    dependencies[name] = entry.version
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link === true || workspaces.has(path)) continue
    const at = path.indexOf('/node_modules/')
    const owner = at < 0 ? undefined : workspaces.get(path.slice(0, at))
    // a workspace's own nested dependencies go under its installed folder; examples' are left out
    const target = path.startsWith('node_modules/') ? path : owner !== undefined && project.tarballs.has(owner) ? `node_modules/${owner}${path.slice(at)}` : undefined
    if (target === undefined) continue
    // dependency flags are the repository's (its dev tools); npm works out the project's own
    const { dev: _d, devOptional: _o, peer: _p, ...kept } = entry
    packages[target] = kept
  }
  packages[''] = { name: project.name, dependencies }
  return {
    packageJson: { name: project.name, private: true, type: 'module', dependencies, ...(overrides === undefined ? {} : { overrides }) },
    lockfile: { name: project.name, lockfileVersion: 3, requires: true, packages: { '': packages[''], ...packages } },
  }
}

/** The integrity npm records for a file: sha512, base64. */
function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`
}
