// `gate api protect` starting, or refusing to: spec auto-discovery over the four probe paths and its
// refusals, a --spec-sha256 mismatch, the durable-receipts gate and bad upstreams or specs (exit 1),
// usage errors (exit 2) and --help.
import t from 'tap'
import { join } from 'node:path'
import { request } from 'undici'
import { fixture, MiB, runProtect, spawnProtect, startProtect, startUpstream } from '../testing/api-protect-fixture.js'
import { PETS_SPEC_YAML } from '../testing/pets-spec.js'

t.test('spec auto-discovery finds each of the four probe paths and warns that the upstream decides', async t => {
  const dir = t.testdir()
  for (const path of ['/openapi.json', '/openapi.yaml', '/swagger.json', '/api-docs']) {
    const upstream = await startUpstream(t, { documents: { [path]: { status: 200, body: PETS_SPEC_YAML } } })
    const gate = await startProtect(t, ['--upstream', upstream.url, '--receipt-store', join(dir, `${path.slice(1)}.db`)])
    t.match(gate.output(), new RegExp(`warning: no --spec; using the OpenAPI document served by the upstream at ${upstream.url}${path}`), path)
    t.match(gate.output(), /with 9 routes/)
    const r = await request(`${gate.url}/pets`, { method: 'POST' })
    t.equal(r.statusCode, 403, 'the discovered policy applies')
    await r.body.dump()
    t.equal(await gate.stop(), 0)
  }
})

t.test('spec auto-discovery failure: a redirect to another host and a too-large document are refused; exit 1', async t => {
  const other = await startUpstream(t, { documents: { '/openapi.json': { status: 200, body: PETS_SPEC_YAML } } })
  const upstream = await startUpstream(t, {
    documents: {
      '/openapi.json': { status: 302, headers: { location: `${other.url}/openapi.json` } },
      '/openapi.yaml': { status: 200, body: Buffer.alloc(16 * MiB + 1, 0x20) },
    },
  })
  const run = await runProtect(['--upstream', upstream.url, '--receipt-store', fixture(t).store])
  t.equal(run.code, 1)
  t.match(run.stderr, /SpecLoad: no OpenAPI document found/)
  t.match(run.stderr, /openapi\.json: AuthorityDenied/)
  t.match(run.stderr, /openapi\.yaml: ResponseTooLarge/)
  t.match(run.stderr, /--spec PATH/)
  t.equal(other.received.length, 0, 'the other host was never contacted')
})

t.test('--spec-sha256 mismatch refuses to start with both hashes', async t => {
  const wrong = 'ab'.repeat(32)
  const run = await runProtect(['--upstream', 'http://127.0.0.1:1', '--spec', fixture(t).spec, '--spec-sha256', wrong, '--allow-ephemeral-receipts'])
  t.equal(run.code, 1)
  t.match(run.stderr, new RegExp(`SHA-256 [0-9a-f]{64}, but --spec-sha256 expects ${wrong}; refusing to start`))
})

t.test('startup refusals', async t => {
  const dir = t.testdir({ 'openapi.yaml': PETS_SPEC_YAML, 'swagger2.yaml': 'openapi: 2.0\n' })
  const spec = join(dir, 'openapi.yaml')
  const durable = await runProtect(['--upstream', 'http://127.0.0.1:1', '--spec', spec])
  t.equal(durable.code, 1, 'durable-receipts gate')
  t.match(durable.stderr, /refusing to start without durable receipts/)
  const memory = await runProtect(['--upstream', 'http://127.0.0.1:1', '--spec', spec, '--receipt-store', ':memory:'])
  t.equal(memory.code, 1, 'an in-memory store counts as none')
  t.match(memory.stderr, /refusing to start without durable receipts/)
  for (const bad of ['ftp://127.0.0.1/', 'http://user:pw@127.0.0.1:1', 'not a url']) {
    const r = await runProtect(['--upstream', bad, '--spec', spec, '--allow-ephemeral-receipts'])
    t.equal(r.code, 1, bad)
    t.match(r.stderr, /Config: --upstream/)
  }
  const parse = await runProtect(['--upstream', 'http://127.0.0.1:1', '--spec', join(dir, 'swagger2.yaml'), '--allow-ephemeral-receipts'])
  t.equal(parse.code, 1)
  t.match(parse.stderr, /SpecParse: .*UnsupportedVersion/)
  const missing = await runProtect(['--upstream', 'http://127.0.0.1:1', '--spec', '/nonexistent.yaml', '--allow-ephemeral-receipts'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /SpecLoad: cannot read --spec/)
})

t.test('usage errors exit 2', async t => {
  for (const args of [
    [],
    ['--upstream', 'http://x', '--upstream-timeout-secs', '0'],
    ['--upstream', 'http://x', '--upstream-timeout-secs', '1.5'],
    ['--upstream', 'http://x', '--spec-sha256', 'abc'],
    ['--upstream', 'http://x', '--no-such-flag'],
  ]) {
    const r = await runProtect(args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, /Usage: gate api protect/)
  }
})

t.test('--help documents every flag', async t => {
  const { child, out, exited } = spawnProtect(['--help'])
  void child
  t.equal(await exited, 0)
  for (const flag of [
    '--upstream', '--spec', '--spec-sha256', '--listen', '--receipt-store', '--allow-ephemeral-receipts', '--upstream-timeout-secs',
    '--authority-seed-file', '--receipt-db', '--revocation-db', '--budget-db', '--control-url', '--control-token',
  ]) {
    t.match(out.stdout, new RegExp(`\\n\\s+${flag} `), flag)
  }
})
