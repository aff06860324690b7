// The dependency direction of docs/architecture.md: `schemas ← sdk ← adapters`; `sdk ← openapi, proxy,
// trust, mcp, wire ← sidecar`. A package declares the narrow interfaces it needs and never imports its
// caller. Checked three ways for every workspace: its package.json dependencies, its tsconfig project
// references, and every `@gate/*` import of its sources; no relative import leaves its folder.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** What each package may depend on; nothing may depend on a package not listed as its dependency here. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  '@gate/schemas': [],
  '@gate/sdk': ['@gate/schemas'],
  '@gate/express': ['@gate/sdk'],
  '@gate/koa': ['@gate/sdk'],
  '@gate/fastify': ['@gate/sdk'],
  '@gate/next': ['@gate/sdk'],
  '@gate/openapi': ['@gate/schemas', '@gate/sdk'],
  '@gate/proxy': ['@gate/sdk'],
  '@gate/trust': ['@gate/schemas', '@gate/sdk'],
  '@gate/mcp': ['@gate/sdk', '@gate/openapi'],
  '@gate/wire': ['@gate/sdk', '@gate/mcp'],
  '@gate/sidecar': ['@gate/schemas', '@gate/sdk', '@gate/openapi', '@gate/proxy', '@gate/trust', '@gate/mcp', '@gate/wire'],
  // a leaf: it tests sidecars it finds at run time (never importing @gate/sidecar) and MCP edges
  '@gate/conformance': ['@gate/schemas', '@gate/sdk', '@gate/mcp'],
}

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm

interface Workspace {
  name: string
  dir: string
}

function workspaces(): Workspace[] {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }
  return root.workspaces.map(dir => ({ dir, name: (JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string }).name }))
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(path)
    return /\.(?:ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The `@gate/*` package a specifier names (`@gate/trust/server` → `@gate/trust`), else undefined. */
function gatePackage(specifier: string): string | undefined {
  return /^(@gate\/[^/]+)/.exec(specifier)?.[1]
}

/** Each way `files` of the package in `dir` named `name` break the direction, one line each. */
function importViolations(name: string, dir: string, files: readonly string[]): string[] {
  const allowed = new Set([name, ...(ALLOWED[name] ?? [])])
  const out: string[] = []
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!
      const where = relative(ROOT, file)
      const target = gatePackage(specifier)
      if (target !== undefined && !allowed.has(target)) out.push(`${where} imports ${specifier}`)
      if (specifier.startsWith('.') && relative(dir, resolve(dirname(file), specifier)).startsWith('..')) out.push(`${where} reaches outside its package: ${specifier}`)
    }
  }
  return out
}

t.test('the checker reports a trust file importing the sidecar, by name or by path', async t => {
  const dir = t.testdir({ src: { 'server.ts': "import { startService } from '@gate/sidecar'\nimport type { Router } from '../../sidecar/src/http/router.js'\nimport { sha256Hex } from '@gate/sdk'\n" } })
  const files = [join(dir, 'src', 'server.ts')]
  const found = importViolations('@gate/trust', dir, files).map(line => line.replace(/^.* imports /, 'imports ').replace(/^.* reaches/, 'reaches'))
  t.same(found, ['imports @gate/sidecar', 'reaches outside its package: ../../sidecar/src/http/router.js'])
  t.same(importViolations('@gate/sidecar', dir, files).filter(line => line.includes('imports')), [], 'the sidecar may import @gate/sdk and depend on trust')
})

t.test('every workspace package is in the direction table, and the table has no cycle', async t => {
  for (const { name, dir } of workspaces()) {
    if (dir.startsWith('examples/')) continue
    t.ok(ALLOWED[name] !== undefined, `${name} (${dir}) is placed`)
  }
  const visiting = new Set<string>()
  const done = new Set<string>()
  const visit = (name: string, path: string[]): void => {
    if (done.has(name)) return
    if (visiting.has(name)) t.fail(`cycle: ${[...path, name].join(' → ')}`)
    visiting.add(name)
    for (const dep of ALLOWED[name] ?? []) visit(dep, [...path, name])
    visiting.delete(name)
    done.add(name)
  }
  for (const name of Object.keys(ALLOWED)) visit(name, [])
})

t.test('package.json dependencies and tsconfig references follow the direction', async t => {
  const byDir = new Map(workspaces().map(w => [w.dir, w.name]))
  for (const { name, dir } of workspaces()) {
    if (dir.startsWith('examples/')) continue
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
    const declared = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies }).filter(dep => gatePackage(dep) !== undefined)
    t.same(declared.filter(dep => !ALLOWED[name]!.includes(dep)), [], `${name}'s package.json depends only on ${ALLOWED[name]!.join(', ') || 'no Gate package'}`)
    // tsconfig files may hold comments: read them as TypeScript does
    const tsconfig = ts.parseConfigFileTextToJson('tsconfig.json', readFileSync(join(ROOT, dir, 'tsconfig.json'), 'utf8')).config as { references?: { path: string }[] }
    const referenced = (tsconfig.references ?? []).map(ref => byDir.get(relative(ROOT, resolve(ROOT, dir, ref.path))) ?? ref.path)
    t.same(referenced.filter(ref => !ALLOWED[name]!.includes(ref)), [], `${name}'s tsconfig references follow it`)
  }
})

t.test('no source file imports a package its own does not depend on, nor reaches outside its folder', async t => {
  let count = 0
  for (const { name, dir } of workspaces()) {
    if (dir.startsWith('examples/')) continue
    const files = sourceFiles(join(ROOT, dir, 'src'))
    count += files.length
    t.same(importViolations(name, join(ROOT, dir), files), [], `${name}'s sources`)
  }
  t.ok(count > 300, `${count} source files read`)
})
