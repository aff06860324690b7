// `gate check` driven through the real `gate` entry point.
import t from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { validate } from '@gate/schemas'
import { buildManifest, buildRouteTable, convertSpec } from '@gate/openapi'
import { routeToJson } from './check.js'

const main = fileURLToPath(new URL('./main.js', import.meta.url))

function gate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise(resolve => {
    execFile(process.execPath, [main, ...args], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

const pets = `openapi: 3.1.0
info: {title: Pets, version: 1.0.0}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      summary: Get one pet
    delete:
      x-gate-approval-required: true
      x-gate-publish: false
      x-gate-budget-limit: 18446744073709551615
      x-gate-sensitivity: restricted
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object}
`

const files = t.testdir({
  'pets.yaml': pets,
  'swagger.json': JSON.stringify({ swagger: '2.0', info: {}, paths: {} }),
  'broken.json': '{"openapi": "3.0.0",',
})

t.test('a valid document prints the route table and the tools and exits 0', async t => {
  const { code, stdout } = await gate(['check', '--spec', join(files, 'pets.yaml')])
  t.equal(code, 0)
  t.match(stdout, /^Pets 1\.0\.0: 3 routes, 2 tools \(1 unpublished\)/)
  t.match(stdout, /METHOD\s+PATTERN\s+DECISION\s+WHY\s+SENSITIVITY\s+FLAGS/)
  t.match(stdout, /POST\s+\/pets\s+DenyByDefault\s+method\s+internal/)
  t.match(stdout, /GET\s+\/pets\/\{id\}\s+SessionAllow\s+method\s+internal/)
  t.match(stdout, /DELETE\s+\/pets\/\{id\}\s+DenyByDefault\s+approval\s+restricted\s+approval unpublished budget=18446744073709551615/)
  t.match(stdout, /getPet\s+read_only,idempotent\s+Get one pet/)
  t.notMatch(stdout, /DELETE \/pets\/\{id\}\s+destructive/, 'the unpublished tool is not listed')
})

t.test('--json prints routes, tools and a schema-valid manifest; budgets are exact strings', async t => {
  const { code, stdout } = await gate(['check', '--json', '--spec', join(files, 'pets.yaml')])
  t.equal(code, 0)
  const out = JSON.parse(stdout) as { routes: Record<string, unknown>[]; tools: { name: string }[]; manifest: unknown }
  t.same(Object.keys(out), ['routes', 'tools', 'manifest'])
  t.same(out.routes[2], {
    method: 'DELETE',
    pattern: '/pets/{id}',
    decision: 'DenyByDefault',
    why: 'approval',
    sensitivity: 'restricted',
    approval_required: true,
    budget_limit: '18446744073709551615',
    published: false,
    tool_name: 'DELETE /pets/{id}',
  })
  t.same(out.tools.map(x => x.name), ['addPet', 'getPet'])
  t.same(validate('gate.manifest.v1', out.manifest), { ok: true })
  const conversion = convertSpec(pets)
  const manifest = buildManifest(conversion)
  const whole = { routes: buildRouteTable(conversion).routes.map(routeToJson), tools: manifest.tools, manifest }
  t.equal(stdout, `${JSON.stringify(whole, null, 2)}\n`, 'streamed output is byte for byte JSON.stringify(…, null, 2)')
})

t.test('an invalid document exits 1 and names the error kind', async t => {
  const swagger = await gate(['check', '--spec', join(files, 'swagger.json')])
  t.equal(swagger.code, 1)
  t.match(swagger.stderr, /^gate check: MissingField: openapi \(found swagger "2\.0"/)
  const broken = await gate(['check', '--json', '--spec', join(files, 'broken.json')])
  t.equal(broken.code, 1)
  t.same(Object.keys(JSON.parse(broken.stdout).error), ['kind', 'message'])
  t.equal(JSON.parse(broken.stdout).error.kind, 'InvalidJson')
})

t.test('an unreadable file exits 1 (SpecLoad)', async t => {
  const { code, stderr } = await gate(['check', '--spec', join(files, 'missing.yaml')])
  t.equal(code, 1)
  t.match(stderr, /SpecLoad: cannot read .*missing\.yaml: ENOENT/)
  const json = await gate(['check', '--json', '--spec', files])
  t.equal(json.code, 1)
  t.equal(JSON.parse(json.stdout).error.kind, 'SpecLoad', 'a directory is unreadable too')
})

t.test('usage errors exit 2: missing --spec, unknown flag, stray argument', async t => {
  for (const args of [['check'], ['check', '--spec'], ['check', '--bogus', '--spec', 'x'], ['check', 'file.yaml']]) {
    const { code, stderr } = await gate(args)
    t.equal(code, 2, args.join(' '))
    t.match(stderr, /Usage: gate check --spec FILE \[--json\]/)
  }
})

t.test('--help describes every flag and exits 0', async t => {
  const { code, stdout } = await gate(['check', '--help'])
  t.equal(code, 0)
  for (const flag of ['--spec FILE', '--json', '-h, --help']) t.match(stdout, flag)
})
