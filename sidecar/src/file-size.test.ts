// No source file over 500 lines, tests included (STYLE: a file that grows past ~400 lines usually holds
// two concerns; split it along them). Exempt: schemas/v1/src/generated/standalone.ts, which ajv's
// standalone code generator writes (every schema precompiled into one module) and nobody edits.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const MAX_LINES = 500
const GENERATED = new Set(['schemas/v1/src/generated/standalone.ts'])
// build output, installed packages and tool state: none of it is source
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'types', '.git', '.next', '.tap', '.ci', '.gate', 'coverage', 'test-artifacts'])
const SOURCE = /\.(?:ts|tsx|mts|js|mjs|cjs)$/

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(path)
    return entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

t.test(`no source file is longer than ${MAX_LINES} lines (the generated standalone validators excepted)`, async t => {
  const files = sourceFiles(ROOT).map(path => relative(ROOT, path))
  t.ok(files.length > 500, `${files.length} source files read`)
  t.ok(files.some(file => GENERATED.has(file)), 'the exempt generated module is where this test expects it')
  const long = files
    .filter(file => !GENERATED.has(file))
    .map(file => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
  t.same(long, [], long.map(({ file, lines }) => `${file}: ${lines} lines`).join('; '))
})
