// No import cycles in any workspace's sources (the rule of docs/architecture.md): every relative import
// of a `src/` file counts, `import type`, `export … from` and a literal `import('…')` included, since a
// cycle through types alone still ties two modules to each other.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SOURCE_DIRS = ['schemas/v1/src', 'sdk/src', 'sdk/express/src', 'sdk/koa/src', 'sdk/fastify/src', 'sdk/next/src', 'openapi/src', 'mcp/src', 'proxy/src', 'trust/src', 'sidecar/src', 'conformance/src', 'bench/src']
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The files each file imports (relative specifiers only, `.js` mapped back to the `.ts` source). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const targets = new Set<string>()
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!
      if (!specifier.startsWith('.')) continue
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))
      if (known.has(target)) targets.add(target)
      else if (known.has(join(target, 'index.ts'))) targets.add(join(target, 'index.ts'))
    }
    graph.set(file, [...targets])
  }
  return graph
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (node: string): void => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return cycles
}

t.test('the cycle finder reports a cycle through type imports and nothing in a tree', async t => {
  t.same(findCycles(new Map([['a', ['b']], ['b', ['c']], ['c', []]])), [])
  t.same(findCycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c']])
  const dir = t.testdir({ 'a.ts': "import type { B } from './b.js'\nexport type A = B", 'b.ts': "export type B = 1\nexport async function load() { return import('./a.js') }" })
  const files = ['a.ts', 'b.ts'].map(name => join(dir, name))
  t.same(findCycles(importGraph(files)), [files])
})

t.test('no workspace source file is part of an import cycle', async t => {
  const files = SOURCE_DIRS.flatMap(dir => sourceFiles(join(ROOT, dir)))
  t.ok(files.length > 300, `${files.length} source files read`)
  const cycles = findCycles(importGraph(files)).map(cycle => cycle.map(file => relative(ROOT, file)))
  t.same(cycles, [], cycles.map(cycle => cycle.join(' ↔ ')).join('; '))
})
