import t from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { RefResolver, escapeToken, pointerToLocation } from './resolve-refs.js'
import { toolsFromSpec } from './tools-from-spec.js'
import { OpenApiError } from './errors.js'

const root = {
  components: {
    schemas: { Pet: { type: 'object' }, 'a/b': { type: 'string' }, 'm~n': { type: 'integer' }, 'sp ace': { type: 'boolean' } },
    parameters: { Alias: { $ref: '#/components/parameters/Real' }, Real: { name: 'x', in: 'query' }, Loop1: { $ref: '#/components/parameters/Loop2' }, Loop2: { $ref: '#/components/parameters/Loop1' } },
  },
  list: [{ v: 0 }, { v: 1 }],
}

function caught(fn: () => unknown): OpenApiError {
  try {
    fn()
  } catch (err) {
    if (err instanceof OpenApiError) return err
    throw err
  }
  throw new Error('expected an OpenApiError')
}

t.test('a #/ pointer resolves with ~1, ~0 and percent-decoding', async t => {
  const r = new RefResolver(root)
  t.same(r.resolve('#/components/schemas/Pet', 'here').value, { type: 'object' })
  t.same(r.resolve('#/components/schemas/a~1b', 'here').value, { type: 'string' })
  t.same(r.resolve('#/components/schemas/m~0n', 'here').value, { type: 'integer' })
  t.same(r.resolve('#/components/schemas/sp%20ace', 'here').value, { type: 'boolean' })
  t.same(r.resolve('#/list/1', 'here').value, { v: 1 })
  t.equal(r.resolve('#/components/schemas/%50et', 'here').pointer, '#/components/schemas/Pet', 'canonical pointer')
})

t.test('a pointer to a nonexistent path is UnresolvedRef naming the ref and where it appeared', async t => {
  const err = caught(() => new RefResolver(root).resolve('#/components/schemas/Nope', 'paths./x.get.responses.200.$ref'))
  t.equal(err.kind, 'UnresolvedRef')
  t.equal(err.message, 'UnresolvedRef: paths./x.get.responses.200.$ref ("#/components/schemas/Nope" points to nothing)')
})

t.test('array indexes must be canonical and in range', async t => {
  const r = new RefResolver(root)
  for (const ref of ['#/list/01', '#/list/2', '#/list/-1', '#/list/x']) t.equal(caught(() => r.resolve(ref, 'l')).kind, 'UnresolvedRef', ref)
})

t.test('inherited properties are not walked (#/__proto__, #/constructor)', async t => {
  const r = new RefResolver(root)
  for (const ref of ['#/__proto__', '#/constructor', '#/components/toString']) t.equal(caught(() => r.resolve(ref, 'l')).kind, 'UnresolvedRef', ref)
})

t.test('external and non-#/ references are UnresolvedRef', async t => {
  const r = new RefResolver(root)
  for (const ref of ['other.yaml#/components/schemas/Pet', 'https://example.com/s.json', '#', '#Pet', '', '/components/schemas/Pet']) {
    const err = caught(() => r.resolve(ref, 'loc'))
    t.equal(err.kind, 'UnresolvedRef', ref)
    t.match(err.message, /is not a local "#\/" pointer/)
  }
  t.equal(caught(() => r.resolve('#/components/%zz', 'loc')).kind, 'UnresolvedRef', 'malformed percent-encoding')
})

t.test('a chain of references is followed; a circular chain is UnresolvedRef', async t => {
  const r = new RefResolver(root)
  t.same(r.resolveChain({ $ref: '#/components/parameters/Alias' }, 'p').value, { name: 'x', in: 'query' })
  t.equal(r.resolveChain({ $ref: '#/components/parameters/Alias' }, 'p').location, 'components.parameters.Real')
  t.match(caught(() => r.resolveChain({ $ref: '#/components/parameters/Loop1' }, 'p')).message, /circular/)
})

t.test('escapeToken and pointerToLocation round-trip names with / and ~', async t => {
  t.equal(escapeToken('a/b~c'), 'a~1b~0c')
  t.equal(pointerToLocation('#/components/schemas/a~1b~0c'), 'components.schemas.a/b~c')
})

t.test('resolution never reads a file nor opens a connection', async t => {
  let connections = 0
  const server = createServer((_req, res) => res.end('{"type":"string"}'))
  server.on('connection', () => connections++)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const dir = t.testdir({ 'schema.json': '{"type":"string"}' })
  writeFileSync(join(dir, 'doc.json'), '{}')
  const refs = [
    `http://127.0.0.1:${port}/schema.json`,
    `http://127.0.0.1:${port}/schema.json#/type`,
    join(dir, 'schema.json'),
    `file://${join(dir, 'schema.json')}`,
    './schema.json',
    'schema.json#/type',
  ]
  for (const ref of refs) {
    const doc = JSON.stringify({
      openapi: '3.1.0',
      info: {},
      paths: { '/x': { get: { parameters: [{ name: 'a', in: 'query', schema: { $ref: ref } }] } } },
    })
    const err = caught(() => toolsFromSpec(doc))
    t.equal(err.kind, 'UnresolvedRef', ref)
    t.match(err.message, 'paths./x.get.parameters[0].schema.$ref')
  }
  // Give any stray connection attempt a chance to land before counting.
  await new Promise(resolve => setImmediate(resolve))
  t.equal(connections, 0, 'no connection reached the server')
})
