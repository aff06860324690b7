import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import t from 'tap'
import { readAllSchemaFiles } from './schema-files.js'
import { SCHEMA_IDS, VALIDATOR_NAMES } from './schema-ids.js'
import { createStandaloneSource, STANDALONE_MODULE_PATH } from './standalone-source.js'
import { assertValid, getValidator, validate, validators } from './standalone.js'

const run = promisify(execFile)
const packageRoot = new URL('../', import.meta.url)

t.test('the committed standalone module is up to date with the JSON schemas', async (t) => {
  const committed = readFileSync(new URL(STANDALONE_MODULE_PATH, packageRoot), 'utf8')
  t.ok(committed === createStandaloneSource(), `${STANDALONE_MODULE_PATH} is stale: run \`npm run generate -w @gate/schemas\``)
})

t.test('the standalone module loads nothing at run time and generates no code from strings', async (t) => {
  const source = readFileSync(new URL(STANDALONE_MODULE_PATH, packageRoot), 'utf8')
  t.notMatch(source, /require\(|new Function|\beval\(/)
  t.same(
    source.match(/^import .*$/gm),
    ["import type { StandaloneValidateFunction } from '../standalone-types.js'"],
    'its only import is a type',
  )
  // Node's flag makes `new Function` and eval throw, as edge runtimes do.
  const probe = `
    const edge = await import(${JSON.stringify(new URL('dist/standalone.js', packageRoot).href)})
    console.log(JSON.stringify([edge.validate('gate.http.verdict.v1', { verdict: 'allow' }), edge.validate('gate.http.verdict.v1', { verdict: 'deny' })]))
    try {
      const runtime = await import(${JSON.stringify(new URL('dist/load.js', packageRoot).href)})
      runtime.validate('gate.http.verdict.v1', { verdict: 'allow' })
      console.log('runtime compiled')
    } catch (error) { console.log('runtime refused: ' + error.name) }`
  const { stdout } = await run(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', probe])
  const [results, runtime] = stdout.trim().split('\n')
  t.same(JSON.parse(results ?? ''), [{ ok: true }, { ok: false, errors: ["(root): must have required property 'reason'"] }])
  t.match(runtime, /^runtime refused: EvalError$/, 'the ajv loader needs code generation, which the flag forbids')
})

t.test('the edge entry point imports only its own modules (no node: built-ins, no ajv)', async (t) => {
  const seen = new Set<string>()
  const visit = (url: URL): void => {
    if (seen.has(url.href)) return
    seen.add(url.href)
    const code = readFileSync(url, 'utf8')
    for (const [, specifier] of code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/g)) {
      t.match(specifier, /^\.\.?\//, `${url.pathname.split('/dist/')[1]} imports ${specifier}`)
      if (specifier?.startsWith('.')) visit(new URL(specifier, url))
    }
  }
  visit(new URL('dist/standalone.js', packageRoot))
  t.ok(seen.size >= 5, `walked ${seen.size} modules`)
})

t.test('the generator refuses a schema whose code needs an ajv helper it cannot inline', async (t) => {
  const schemas = new Map(readAllSchemaFiles())
  const manifest = structuredClone(schemas.get('gate.manifest.v1'))
  if (manifest) manifest.properties.tools = { ...manifest.properties.tools, uniqueItems: true }
  schemas.set('gate.manifest.v1', manifest ?? {})
  t.throws(() => createStandaloneSource(schemas), /require\("ajv\/dist\/runtime\/equal"\)/)
})

t.test('the standalone API matches the loader API', async (t) => {
  t.same(Object.keys(validators).sort(), Object.values(VALIDATOR_NAMES).sort())
  for (const id of SCHEMA_IDS) t.equal(getValidator(id), validators[VALIDATOR_NAMES[id]])
  t.throws(() => getValidator('gate.unknown.v1'), { code: 'gate_unknown_schema', status: 400 })
  t.throws(() => validate('toString', {}), { code: 'gate_unknown_schema' })
  t.throws(() => assertValid('gate.http.verdict.v1', { verdict: 'cancel' }), {
    name: 'SchemaValidationError',
    code: 'gate_bad_request',
    status: 400,
    errors: ["(root): must have required property 'reason'"],
  })
  t.doesNotThrow(() => assertValid('gate.http.verdict.v1', { verdict: 'allow' }))
})
