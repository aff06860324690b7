import t from 'tap'
import { createHash } from 'node:crypto'
import { validate } from '@gate/schemas'
import { manifestFromSpec } from './manifest-from-spec.js'

const input = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '2.1.0', description: 'Pets — all of them' },
  paths: {
    '/pets': { get: { operationId: 'listPets' }, post: { operationId: 'addPet', 'x-gate-publish': false } },
  },
})

t.test('the manifest carries the header fields, the policy hash and the published tools', async t => {
  const m = manifestFromSpec(input)
  t.same(Object.keys(m), ['schema', 'server_id', 'name', 'version', 'protocol_version', 'description', 'policy_hash', 'tools'])
  t.equal(m.schema, 'gate.manifest.v1')
  t.equal(m.server_id, 'openapi-server')
  t.equal(m.name, 'Petstore')
  t.equal(m.version, '2.1.0')
  t.equal(m.protocol_version, '1.0')
  t.equal(m.description, 'Pets — all of them')
  t.equal(m.policy_hash, createHash('sha256').update(Buffer.from(input, 'utf8')).digest('hex'), 'SHA-256 of the UTF-8 bytes')
  t.same(m.tools.map(x => x.name), ['listPets'], 'the unpublished operation is absent')
  t.same(validate('gate.manifest.v1', m), { ok: true })
})

t.test('server_id comes from the config; defaults fill a bare info', async t => {
  const m = manifestFromSpec('openapi: 3.1.0\ninfo: {}\npaths: {}\n', { serverId: 'pets-api' })
  t.equal(m.server_id, 'pets-api')
  t.equal(m.name, 'Untitled API')
  t.equal(m.version, '0.0.0')
  t.notOk('description' in m)
  t.same(m.tools, [])
  t.same(validate('gate.manifest.v1', m), { ok: true })
})

t.test('the policy hash changes with any byte of the input, even whitespace', async t => {
  t.not(manifestFromSpec(input).policy_hash, manifestFromSpec(`${input}\n`).policy_hash)
})

t.test('the manifest is plain JSON data (no BigInt, no cycles) even with recursive schemas and huge budgets', async t => {
  const text = JSON.stringify({
    openapi: '3.1.0',
    info: {},
    paths: { '/n': { post: { 'x-gate-budget-limit': 1, requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/N' } } } } } } },
    components: { schemas: { N: { properties: { n: { $ref: '#/components/schemas/N' } } } } },
  }).replace('"x-gate-budget-limit":1', '"x-gate-budget-limit":18446744073709551615')
  const m = manifestFromSpec(text)
  t.same(JSON.parse(JSON.stringify(m)), m)
  t.same(validate('gate.manifest.v1', m), { ok: true })
})
