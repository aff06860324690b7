import t from 'tap'
import { extractOperations, compareCodePoints } from './extract-operations.js'
import { parseDocument } from './parse-document.js'
import { RefResolver } from './resolve-refs.js'
import { OpenApiError } from './errors.js'

function extract(paths: Record<string, unknown>, components: Record<string, unknown> = {}) {
  const doc = parseDocument(JSON.stringify({ openapi: '3.0.3', info: {}, paths, components }))
  return extractOperations(doc, new RefResolver(doc.root))
}

function failure(fn: () => unknown): OpenApiError {
  try {
    fn()
  } catch (err) {
    if (err instanceof OpenApiError) return err
    throw err
  }
  throw new Error('expected an OpenApiError')
}

t.test('paths come out sorted by name whatever the document order', async t => {
  const ops = extract({ '/b': { get: {} }, '/a/z': { get: {} }, '/a': { get: {} }, '/A': { get: {} } })
  t.same(ops.map(o => o.path), ['/A', '/a', '/a/z', '/b'])
})

t.test('methods are read in the order GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS; other keys are ignored', async t => {
  const item = { trace: {}, options: {}, head: {}, delete: {}, patch: {}, put: {}, post: {}, get: {}, summary: 's', servers: [], 'x-y': {} }
  t.same(extract({ '/p': item }).map(o => o.method), ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'])
})

t.test('paths-object extensions (x-…) are not paths', async t => {
  t.same(extract({ 'x-internal': { get: {} }, '/p': { get: {} } }).map(o => o.path), ['/p'])
})

t.test('path-level and operation-level parameters merge; the operation wins on the same name and in', async t => {
  const [op] = extract({
    '/pets/{id}': {
      parameters: [
        { name: 'id', in: 'path', description: 'path-level' },
        { name: 'limit', in: 'query', description: 'path-level limit' },
        { name: 'limit', in: 'header', description: 'a header of the same name' },
      ],
      get: { parameters: [{ name: 'limit', in: 'query', description: 'operation-level limit' }, { name: 'extra', in: 'query' }] },
    },
  })
  t.same(
    op!.parameters.map(p => [p.name, p.in, p.description]),
    [
      ['id', 'path', 'path-level'],
      ['limit', 'query', 'operation-level limit'],
      ['limit', 'header', 'a header of the same name'],
      ['extra', 'query', undefined],
    ],
  )
})

t.test('parameters given by $ref are resolved before merging', async t => {
  const [op] = extract(
    { '/p': { parameters: [{ $ref: '#/components/parameters/Limit' }], get: { parameters: [{ name: 'limit', in: 'query', required: true }] } } },
    { parameters: { Limit: { name: 'limit', in: 'query' } } },
  )
  t.equal(op!.parameters.length, 1)
  t.equal(op!.parameters[0]!.required, true, 'operation-level twin replaced the referenced one')
})

t.test('required defaults to true for path parameters and false otherwise', async t => {
  const [op] = extract({ '/p/{a}': { get: { parameters: ['path', 'query', 'header', 'cookie'].map(where => ({ name: where, in: where })) } } })
  t.same(op!.parameters.map(p => p.required), [true, false, false, false])
})

t.test('a missing or empty parameter name is MissingField naming the parameter', async t => {
  t.equal(failure(() => extract({ '/pets': { get: { parameters: [{ in: 'query' }] } } })).message, 'MissingField: paths./pets.get.parameters[0].name')
  t.equal(failure(() => extract({ '/pets': { parameters: [{ name: '', in: 'query' }] } })).kind, 'MissingField')
})

t.test('a missing in is MissingField; an unsupported in is InvalidSpec', async t => {
  t.equal(failure(() => extract({ '/p': { get: { parameters: [{ name: 'a' }] } } })).message, 'MissingField: paths./p.get.parameters[0].in')
  const bad = failure(() => extract({ '/p': { get: { parameters: [{ name: 'a', in: 'body' }] } } }))
  t.equal(bad.kind, 'InvalidSpec')
  t.match(bad.message, /^InvalidSpec: paths\.\/p\.get\.parameters\[0\]\.in \("body" is not one of path, query, header, cookie\)/)
})

t.test('a non-boolean required is InvalidSpec', async t => {
  const err = failure(() => extract({ '/p': { get: { parameters: [{ name: 'a', in: 'query', required: 'yes' }] } } }))
  t.equal(err.message, 'InvalidSpec: paths./p.get.parameters[0].required (must be a boolean)')
})

t.test('parameters that are not an array are InvalidSpec, at path or operation level', async t => {
  t.equal(failure(() => extract({ '/p': { parameters: {}, get: {} } })).message, 'InvalidSpec: paths./p.parameters (parameters must be an array)')
  t.equal(failure(() => extract({ '/p': { get: { parameters: 'a' } } })).message, 'InvalidSpec: paths./p.get.parameters (parameters must be an array)')
})

t.test('an error in a referenced parameter names the component and the referencing place', async t => {
  const err = failure(() =>
    extract({ '/p': { get: { parameters: [{ $ref: '#/components/parameters/Bad' }] } } }, { parameters: { Bad: { in: 'query' } } }),
  )
  t.equal(err.message, 'MissingField: components.parameters.Bad.name (referenced from paths./p.get.parameters[0])')
})

t.test('a path item given by $ref is resolved, and a dangling one is UnresolvedRef', async t => {
  const ops = extract({ '/p': { $ref: '#/components/pathItems/P' } }, { pathItems: { P: { get: { operationId: 'g' } } } })
  t.equal(ops[0]!.operation.operationId, 'g')
  t.equal(failure(() => extract({ '/p': { $ref: '#/components/pathItems/Q' } })).kind, 'UnresolvedRef')
})

t.test('a path item or operation that is not an object is InvalidSpec', async t => {
  t.equal(failure(() => extract({ '/p': null })).kind, 'InvalidSpec')
  t.equal(failure(() => extract({ '/p': { get: 'x' } })).message, 'InvalidSpec: paths./p.get (an operation must be an object)')
})

t.test('compareCodePoints orders by code point (astral characters after U+FFFF-range ones)', async t => {
  t.same(['\u{1F600}', '\uFFFD', 'a'].sort(compareCodePoints), ['a', '\uFFFD', '\u{1F600}'])
})
