import t from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { SchemaExpander } from './expand-schema.js'
import { RefResolver } from './resolve-refs.js'
import { toolsFromSpec } from './tools-from-spec.js'
import { OpenApiError } from '../errors.js'

function documentWith(schemas: Record<string, unknown>, body: unknown, output?: unknown): string {
  return JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'T', version: '1' },
    paths: {
      '/x': {
        post: {
          operationId: 'op',
          requestBody: { required: true, content: { 'application/json': { schema: body } } },
          responses: output === undefined ? {} : { '200': { content: { 'application/json': { schema: output } } } },
        },
      },
    },
    components: { schemas },
  })
}

const ajv = new Ajv2020({ strict: false })

t.test('a self-recursive schema (tree node) becomes a local $defs reference', async t => {
  const schemas = {
    Node: { type: 'object', properties: { value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } },
  }
  const [tool] = toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/Node' }, { $ref: '#/components/schemas/Node' }))
  t.same(tool!.input_schema, {
    type: 'object',
    properties: { body: { $ref: '#/$defs/Node' } },
    required: ['body'],
    $defs: { Node: { type: 'object', properties: { value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
  })
  t.same(tool!.output_schema, { $ref: '#/$defs/Node', $defs: tool!.input_schema.$defs }, 'the output schema carries its own $defs')
  const validate = ajv.compile(tool!.input_schema)
  t.ok(validate({ body: { value: 'a', children: [{ value: 'b', children: [] }] } }), 'usable: validates a tree')
  t.notOk(validate({ body: { children: [{ value: 5 }] } }), 'usable: rejects a bad nested node')
})

t.test('a linked list (nullable next) terminates', async t => {
  const schemas = { Item: { type: 'object', properties: { next: { anyOf: [{ $ref: '#/components/schemas/Item' }, { type: 'null' }] } } } }
  const [tool] = toolsFromSpec(documentWith(schemas, { type: 'object', properties: { head: { $ref: '#/components/schemas/Item' } } }))
  t.same(Object.keys(tool!.input_schema.$defs as object), ['Item'])
  t.same((tool!.input_schema.properties as Record<string, unknown>).body, { type: 'object', properties: { head: { $ref: '#/$defs/Item' } } })
  t.ok(ajv.compile(tool!.input_schema)({ body: { head: { next: { next: null } } } }))
})

t.test('mutual recursion (A → B → A) terminates with both reachable through $defs', async t => {
  const schemas = {
    A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } },
    B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } },
  }
  const [tool] = toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/A' }))
  const defs = tool!.input_schema.$defs as Record<string, unknown>
  t.ok(defs.A, 'A is a definition')
  t.same((tool!.input_schema.properties as Record<string, unknown>).body, { $ref: '#/$defs/A' })
  t.doesNotThrow(() => JSON.stringify(tool))
  const validate = ajv.compile(tool!.input_schema)
  t.ok(validate({ body: { b: { a: { b: {} } } } }))
  t.notOk(validate({ body: { b: 5 } }))
})

t.test('recursion entered from a non-recursive schema and a three-cycle all terminate', async t => {
  const schemas = {
    Wrapper: { type: 'object', properties: { root: { $ref: '#/components/schemas/A' }, tag: { $ref: '#/components/schemas/Tag' } } },
    Tag: { type: 'string' },
    A: { properties: { next: { $ref: '#/components/schemas/B' } } },
    B: { properties: { next: { $ref: '#/components/schemas/C' } } },
    C: { properties: { next: { $ref: '#/components/schemas/A' } } },
  }
  const [tool] = toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/Wrapper' }))
  const body = (tool!.input_schema.properties as Record<string, Record<string, Record<string, unknown>>>).body!
  t.same(body.properties!.tag, { type: 'string' }, 'non-recursive references are inlined')
  t.ok(ajv.compile(tool!.input_schema)({ body: { root: { next: { next: { next: { next: {} } } } } } }))
})

t.test('$ref siblings apply over the referenced schema', async t => {
  const schemas = { Name: { type: 'string', description: 'generic' } }
  const [tool] = toolsFromSpec(documentWith(schemas, { type: 'object', properties: { n: { $ref: '#/components/schemas/Name', description: 'specific' } } }))
  const body = (tool!.input_schema.properties as Record<string, Record<string, Record<string, unknown>>>).body!
  t.same(body.properties!.n, { type: 'string', description: 'specific' })
})

t.test('values of example, default, enum, const and x-* are data: a $ref there is not followed', async t => {
  const data = { $ref: '#/components/schemas/Missing' }
  const body = { type: 'object', example: data, default: data, enum: [data], const: data, 'x-note': data, properties: { example: { $ref: '#/components/schemas/S' } } }
  const [tool] = toolsFromSpec(documentWith({ S: { type: 'string' } }, body))
  const out = (tool!.input_schema.properties as Record<string, Record<string, unknown>>).body!
  t.same(out.example, data)
  t.same(out['x-note'], data)
  t.same(out.properties, { example: { type: 'string' } }, 'a property named "example" is still a schema')
})

t.test('a dangling reference inside a component names the component location', async t => {
  const schemas = { Pet: { type: 'object', properties: { owner: { $ref: '#/components/schemas/Owner' } } } }
  try {
    toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/Pet' }))
    t.fail('expected UnresolvedRef')
  } catch (err) {
    t.ok(err instanceof OpenApiError)
    t.equal((err as OpenApiError).kind, 'UnresolvedRef')
    t.equal((err as OpenApiError).message, 'UnresolvedRef: components.schemas.Pet.properties.owner.$ref ("#/components/schemas/Owner" points to nothing)')
  }
})

t.test('a schema that is only a reference to itself is UnresolvedRef (circular), not an empty $defs loop', async t => {
  const schemas = { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } }
  t.throws(() => toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/A' })), { name: 'OpenApiError', kind: 'UnresolvedRef' })
})

t.test('billion-laughs references (each level uses the previous twice, 64 levels) are cut into $defs and stay small', async t => {
  const schemas: Record<string, unknown> = { L0: { type: 'string' } }
  for (let i = 1; i <= 64; i++) {
    const prev = { $ref: `#/components/schemas/L${i - 1}` }
    schemas[`L${i}`] = { type: 'object', properties: { a: prev, b: prev } }
  }
  const [tool] = toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/L64' }))
  const size = JSON.stringify(tool).length
  t.ok(size < 10_000_000, `serialized tool is ${size} characters`)
  t.ok(Object.keys(tool!.input_schema.$defs as object).length > 0, 'large expansions went to $defs')
  // Every reference left in the output points at one of its own $defs. (Compiling it with ajv is
  // no test of ours: ajv expands $defs per use site and brings the exponential back.)
  const defs = tool!.input_schema.$defs as Record<string, unknown>
  const refs = [...JSON.stringify(tool!.input_schema).matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)].map(m => decodeURIComponent(m[1]!))
  t.ok(refs.length > 0)
  t.ok(refs.every(key => key in defs), 'no dangling local reference')
})

t.test('the total expansion of a document is capped (InvalidSpec)', async t => {
  const schemas = { Big: { type: 'object', properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: 'string' }])) } }
  const doc = JSON.parse(documentWith(schemas, { $ref: '#/components/schemas/Big' }))
  const resolver = new RefResolver(doc)
  const expander = new SchemaExpander(resolver, { maxDepth: 100, maxInlineNodes: 10_000, maxTotalChars: 20_000 })
  t.throws(() => {
    for (let i = 0; i < 10; i++) expander.expand({ $ref: '#/components/schemas/Big' }, 'here', new Set())
  }, { name: 'OpenApiError', kind: 'InvalidSpec', message: /expanded tool schemas exceed 20000 characters/ })
})

t.test('nesting deeper than the limit is InvalidSpec, never a stack overflow', async t => {
  // Built as text: JSON.stringify itself cannot nest this deep, JSON.parse can.
  const deep = `${'{"type":"array","items":'.repeat(50_000)}{"type":"string"}${'}'.repeat(50_000)}`
  const input = documentWith({}, { $ref: '#/components/schemas/Deep' }).replace('"components":{"schemas":{}}', `"components":{"schemas":{"Deep":${deep}}}`)
  // as JSON text, the reader refuses it first, before building anything (sdk json-reader.ts)
  t.throws(() => toolsFromSpec(input), { name: 'OpenApiError', kind: 'InvalidJson', message: /nests deeper than 512 levels/ })
  const deepExample = `${'['.repeat(50_000)}${']'.repeat(50_000)}`
  const withExample = documentWith({}, { $ref: '#/components/schemas/E' }).replace('"components":{"schemas":{}}', `"components":{"schemas":{"E":{"type":"array","example":${deepExample}}}}`)
  t.throws(() => toolsFromSpec(withExample), { name: 'OpenApiError', kind: 'InvalidJson', message: /nests deeper than 512 levels/ })
  // a tree handed in already parsed is held to the expander's own limit
  const parsedDeep = JSON.parse(`${'{"type":"array","items":'.repeat(600)}{"type":"string"}${'}'.repeat(600)}`) as object
  const expander = new SchemaExpander(new RefResolver({ components: { schemas: { Deep: parsedDeep } } }), { maxDepth: 512, maxInlineNodes: 1e6, maxTotalChars: 1e9 })
  t.throws(() => expander.expand({ $ref: '#/components/schemas/Deep' }, 'deep', new Set()), { name: 'OpenApiError', kind: 'InvalidSpec', message: /nested deeper than 512 levels/ })
  const chain: Record<string, unknown> = { C0: { type: 'string' } }
  for (let i = 1; i < 2_000; i++) chain[`C${i}`] = { type: 'array', items: { $ref: `#/components/schemas/C${i - 1}` } }
  t.throws(() => toolsFromSpec(documentWith(chain, { $ref: '#/components/schemas/C1999' })), { name: 'OpenApiError', kind: 'InvalidSpec' })
})

t.test('a memoized schema reused deep inside another is still held to the depth limit', async t => {
  const doc = { components: { schemas: { S: { items: { items: { items: { type: 'string' } } } } } } }
  const expander = new SchemaExpander(new RefResolver(doc), { maxDepth: 8, maxInlineNodes: 10_000, maxTotalChars: 1e9 })
  expander.expand({ $ref: '#/components/schemas/S' }, 'first', new Set())
  t.throws(() => expander.expand({ a: { b: { c: { d: { $ref: '#/components/schemas/S' } } } } }, 'second', new Set()), { name: 'OpenApiError', kind: 'InvalidSpec' })
})

t.test('schemas without references come back as the same object (copy on write)', async t => {
  const plain = { type: 'object', properties: { a: { type: 'string' } } }
  const expander = new SchemaExpander(new RefResolver({}))
  t.equal(expander.expand(plain, 'x', new Set()), plain)
})

t.test("a component name outside OpenAPI's character set is keyed by its pointer and referenced URI-encoded", async t => {
  const schemas = { 'a b': { properties: { self: { $ref: '#/components/schemas/a%20b' } } } }
  const [tool] = toolsFromSpec(documentWith(schemas, { $ref: '#/components/schemas/a%20b' }))
  const defs = tool!.input_schema.$defs as Record<string, unknown>
  t.same(Object.keys(defs), ['#/components/schemas/a b'])
  t.same((tool!.input_schema.properties as Record<string, unknown>).body, { $ref: '#/$defs/%23~1components~1schemas~1a%20b' })
  t.ok(ajv.compile(tool!.input_schema)({ body: { self: { self: {} } } }), 'the encoded reference resolves')
})
