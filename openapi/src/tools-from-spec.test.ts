import t from 'tap'
import fc from 'fast-check'
import { validate } from '@gate/schemas'
import { toolsFromSpec } from './tools-from-spec.js'
import { manifestFromSpec } from './manifest-from-spec.js'
import { convertSpec } from './convert-spec.js'
import { stringify as toYaml } from 'yaml'

const doc = (paths: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ openapi: '3.1.0', info: { title: 'Pets', version: '1.0.0' }, paths, ...extra })

// Every manifest these documents produce must validate against gate.manifest.v1.
const manifestCheck = (input: string, config?: Parameters<typeof manifestFromSpec>[1]) =>
  validate('gate.manifest.v1', manifestFromSpec(input, config))

t.test('the name is operationId, else {METHOD} {path}', async t => {
  const input = doc({ '/pets/{id}': { get: { operationId: 'getPet' }, delete: {}, put: { operationId: '' } } })
  t.same(toolsFromSpec(input).map(x => x.name), ['getPet', 'PUT /pets/{id}', 'DELETE /pets/{id}'])
  t.same(manifestCheck(input), { ok: true }, 'valid gate.manifest.v1')
})

t.test('the description is summary, else description, else {METHOD} {path}', async t => {
  const input = doc({ '/a': { get: { summary: 'S', description: 'D' }, post: { description: 'D' }, put: {}, patch: { summary: '  ', description: 'D2' } } })
  t.same(toolsFromSpec(input).map(x => x.description), ['S', 'D', 'PUT /a', 'D2'])
})

t.test('annotations per method: destructive for DELETE, idempotent for GET/PUT/DELETE, read_only without side effects', async t => {
  const methods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options']
  const tools = toolsFromSpec(doc({ '/r': Object.fromEntries(methods.map(m => [m, {}])) }))
  t.same(
    Object.fromEntries(tools.map(x => [x.name.split(' ')[0], x.annotations])),
    {
      GET: { read_only: true, destructive: false, idempotent: true, requires_approval: false },
      POST: { read_only: false, destructive: false, idempotent: false, requires_approval: false },
      PUT: { read_only: false, destructive: false, idempotent: true, requires_approval: false },
      PATCH: { read_only: false, destructive: false, idempotent: false, requires_approval: false },
      DELETE: { read_only: false, destructive: true, idempotent: true, requires_approval: false },
      HEAD: { read_only: true, destructive: false, idempotent: false, requires_approval: false },
      OPTIONS: { read_only: true, destructive: false, idempotent: false, requires_approval: false },
    },
  )
})

t.test('x-gate-side-effects drives read_only, x-gate-approval-required drives requires_approval', async t => {
  const tools = toolsFromSpec(doc({ '/r': { get: { 'x-gate-side-effects': true, 'x-gate-approval-required': true }, post: { 'x-gate-side-effects': false } } }))
  t.same(tools[0]!.annotations, { read_only: false, destructive: false, idempotent: true, requires_approval: true })
  t.same(tools[1]!.annotations, { read_only: true, destructive: false, idempotent: false, requires_approval: false })
})

t.test('no pricing and no estimated_duration_ms on any tool', async t => {
  const [tool] = toolsFromSpec(doc({ '/r': { get: {} } }))
  t.notOk('pricing' in tool!)
  t.notOk('estimated_duration_ms' in tool!.annotations)
  t.same(Object.keys(tool!), ['name', 'description', 'input_schema', 'annotations'])
})

const withOutput = doc({ '/r': { get: { responses: { '200': { content: { 'application/json': { schema: { type: 'array' } } } } } } } })

t.test('the output schema is included by default and absent with includeOutputSchemas off', async t => {
  t.same(toolsFromSpec(withOutput)[0]!.output_schema, { type: 'array' })
  t.notOk('output_schema' in toolsFromSpec(withOutput, { includeOutputSchemas: false })[0]!)
  t.same(manifestCheck(withOutput, { includeOutputSchemas: false }), { ok: true }, 'valid gate.manifest.v1')
})

t.test('x-gate-publish: false hides the tool; respectPublishFlag off shows it', async t => {
  const input = doc({ '/a': { get: { operationId: 'shown' }, post: { operationId: 'hidden', 'x-gate-publish': false } } })
  t.same(toolsFromSpec(input).map(x => x.name), ['shown'])
  t.same(toolsFromSpec(input, { respectPublishFlag: false }).map(x => x.name), ['shown', 'hidden'])
  t.same(toolsFromSpec(doc({ '/a': { get: { 'x-gate-publish': 'no' } } })).length, 1, 'a wrong-typed flag is absent (published)')
})

t.test('YAML and JSON forms of one document give the same tools', async t => {
  const object = {
    openapi: '3.0.3',
    info: { title: 'Y', version: '1' },
    paths: { '/pets/{id}': { parameters: [{ name: 'id', in: 'path', schema: { type: 'integer' } }], get: { summary: 'Get', responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } } } } },
    components: { schemas: { Pet: { type: 'object', properties: { id: { type: 'integer' } } } } },
  }
  t.same(toolsFromSpec(toYaml(object)), toolsFromSpec(JSON.stringify(object)))
  t.same(manifestCheck(toYaml(object)), { ok: true }, 'valid gate.manifest.v1')
})

t.test('generator config is validated at call time: unknown keys and wrong types name the option', async t => {
  const input = doc({})
  t.throws(() => toolsFromSpec(input, { serverid: 'x' } as never), { code: 'gate_invalid_config', message: /^serverid must be left out: it is not a generator option/ })
  t.throws(() => toolsFromSpec(input, { include_output_schemas: false } as never), { code: 'gate_invalid_config', message: /^include_output_schemas must be spelled includeOutputSchemas/ })
  t.throws(() => toolsFromSpec(input, { includeOutputSchemas: 'no' } as never), { code: 'gate_invalid_config', message: 'includeOutputSchemas must be a boolean, got "no"' })
  t.throws(() => toolsFromSpec(input, { respectPublishFlag: 1 } as never), { message: /^respectPublishFlag must be a boolean/ })
  t.throws(() => toolsFromSpec(input, { serverId: '' }), { message: /^serverId must be a non-empty string/ })
  t.throws(() => toolsFromSpec(input, null as never), { code: 'gate_invalid_config' })
  t.throws(() => toolsFromSpec('not yaml: [', { bogus: 1 } as never), { code: 'gate_invalid_config' }, 'config is checked before the document')
})

// Property: tool order and content depend only on the document's content, not on its key order.
const segment = fc.stringMatching(/^[a-z]{1,6}$|^\{[a-z]{1,4}\}$/)
const pathKey = fc.array(segment, { minLength: 1, maxLength: 4 }).map(parts => `/${parts.join('/')}`)
// `operationId: true` becomes a name unique to the operation (clashing names are InvalidSpec).
const operation = fc.record(
  {
    operationId: fc.constant(true),
    summary: fc.string({ maxLength: 10 }),
    'x-gate-side-effects': fc.boolean(),
    'x-gate-publish': fc.boolean(),
  },
  { requiredKeys: [] },
)
const pathItem = fc.dictionary(fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'), operation, { minKeys: 1 })

t.test('sorted output is independent of path key order (property)', async t => {
  fc.assert(
    fc.property(fc.dictionary(pathKey, pathItem, { minKeys: 1, maxKeys: 12 }), fc.func(fc.integer()), (generated, rank) => {
      const paths = Object.fromEntries(
        Object.entries(generated).map(([path, item]) => [
          path,
          Object.fromEntries(Object.entries(item).map(([method, op]) => [method, op.operationId ? { ...op, operationId: `${method}${path}` } : op])),
        ]),
      )
      const keys = Object.keys(paths)
      const shuffled = Object.fromEntries(keys.map(k => [k, paths[k]] as const).sort((a, b) => rank(a[0]) - rank(b[0]) || (a[0] < b[0] ? -1 : 1)))
      const reversed = Object.fromEntries(keys.reverse().map(k => [k, paths[k]] as const))
      const a = manifestFromSpec(doc(paths))
      const b = manifestFromSpec(doc(shuffled))
      const c = manifestFromSpec(doc(reversed))
      if (JSON.stringify(a.tools) !== JSON.stringify(b.tools) || JSON.stringify(a.tools) !== JSON.stringify(c.tools)) return false
      const v = validate('gate.manifest.v1', a)
      return v.ok
    }),
    { numRuns: 200 },
  )
  t.pass('200 random documents')
})

t.test('two operations with one tool name are InvalidSpec naming both (names are never rewritten)', async t => {
  const input = doc({ '/a': { get: { operationId: 'same' } }, '/b': { post: { operationId: 'same' } } })
  t.throws(() => toolsFromSpec(input), { name: 'OpenApiError', kind: 'InvalidSpec', message: 'InvalidSpec: paths./b.post.operationId (tool name "same" is already used by paths./a.get)' })
  const clash = doc({ '/a': { get: {} }, '/b': { get: { operationId: 'GET /a' } } })
  t.throws(() => toolsFromSpec(clash), { name: 'OpenApiError', kind: 'InvalidSpec' }, 'an operationId equal to another operation’s fallback name')
})

t.test('every operation that takes a request body gets a body property, {} when the document gives no schema', async t => {
  const input = doc({
    '/upload': { put: { operationId: 'upload', requestBody: { required: true, content: { 'application/octet-stream': {} } } } },
    '/note': { post: { operationId: 'note', requestBody: { content: { 'text/plain': { schema: { type: 'string' } } } } } },
    '/empty': { post: { operationId: 'empty', requestBody: {} } },
    '/none': { post: { operationId: 'none' } },
  })
  const byName = Object.fromEntries(toolsFromSpec(input).map(x => [x.name, x.input_schema]))
  t.same(byName.upload, { type: 'object', properties: { body: {} }, required: ['body'] })
  t.same(byName.note, { type: 'object', properties: { body: { type: 'string' } } })
  t.same(byName.empty, { type: 'object', properties: { body: {} } }, 'a requestBody without content')
  t.same(byName.none, { type: 'object', properties: {} }, 'no requestBody, no body')
  t.same(manifestCheck(input), { ok: true })
})

t.test('each operation carries its call plan: method, path, parameters by location, body media type', async t => {
  const input = doc({
    '/pets/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true }, { name: 'trace', in: 'header' }],
      put: { operationId: 'putPet', parameters: [{ name: 'dry', in: 'query' }, { name: 'body', in: 'query' }], requestBody: { content: { 'application/octet-stream': {} } } },
      get: { operationId: 'getPet' },
    },
  })
  const calls = Object.fromEntries(convertSpec(input).operations.map(op => [op.tool.name, op.call]))
  t.same(calls.getPet, { method: 'GET', path: '/pets/{id}', parameters: [{ name: 'id', in: 'path' }] })
  t.same(calls.putPet, {
    method: 'PUT',
    path: '/pets/{id}',
    parameters: [{ name: 'id', in: 'path' }, { name: 'dry', in: 'query' }],
    body: { mediaType: 'application/octet-stream', required: false },
  }, 'header parameters are not called with; the body replaces a query parameter named body')
})
