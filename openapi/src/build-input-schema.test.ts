import t from 'tap'
import { buildInputSchema } from './build-input-schema.js'
import { SchemaExpander } from './expand-schema.js'
import type { ExtractedParameter } from './extract-operations.js'
import { RefResolver } from './resolve-refs.js'

const expander = () => new SchemaExpander(new RefResolver({ components: { schemas: { Id: { type: 'integer' }, Text: 'not a schema' } } }))
const param = (p: Partial<ExtractedParameter> & Pick<ExtractedParameter, 'name' | 'in'>): ExtractedParameter => ({
  required: p.in === 'path',
  description: undefined,
  schema: undefined,
  location: `p.${p.name}`,
  ...p,
})

t.test('only path and query parameters become properties; header and cookie never do', async t => {
  const schema = buildInputSchema(
    [param({ name: 'id', in: 'path', schema: { type: 'integer' } }), param({ name: 'q', in: 'query', schema: { type: 'string' } }), param({ name: 'X-Trace', in: 'header' }), param({ name: 'session', in: 'cookie' })],
    undefined,
    expander(),
  )
  t.same(schema, { type: 'object', properties: { id: { type: 'integer' }, q: { type: 'string' } }, required: ['id'] })
})

t.test('a parameter without a schema or with a non-object schema becomes {type: string}', async t => {
  const schema = buildInputSchema(
    [param({ name: 'a', in: 'query' }), param({ name: 'b', in: 'query', schema: true }), param({ name: 'c', in: 'query', schema: 'integer' }), param({ name: 'd', in: 'query', schema: [] }), param({ name: 'e', in: 'query', schema: { $ref: '#/components/schemas/Text' } })],
    undefined,
    expander(),
  )
  t.same(schema.properties, { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' }, d: { type: 'string' }, e: { type: 'string' } })
})

t.test('a parameter keeps its own schema (resolved) and its description is copied in', async t => {
  const schema = buildInputSchema([param({ name: 'id', in: 'path', description: 'The pet id', schema: { $ref: '#/components/schemas/Id' } })], undefined, expander())
  t.same(schema.properties, { id: { type: 'integer', description: 'The pet id' } })
})

t.test('required is omitted when empty', async t => {
  const schema = buildInputSchema([param({ name: 'q', in: 'query' })], undefined, expander())
  t.same(schema, { type: 'object', properties: { q: { type: 'string' } } })
  t.same(buildInputSchema([], undefined, expander()), { type: 'object', properties: {} })
})

t.test('the body property is required only when requestBody.required is true', async t => {
  const src = { schema: { type: 'object' }, location: 'b' }
  const json = 'application/json'
  t.same(buildInputSchema([], { source: src, mediaType: json, required: true }, expander()), { type: 'object', properties: { body: { type: 'object' } }, required: ['body'] })
  t.same(buildInputSchema([], { source: src, mediaType: json, required: false }, expander()), { type: 'object', properties: { body: { type: 'object' } } })
})

t.test('a request body without a usable schema still gets a body property, {} (any value)', async t => {
  const octets = 'application/octet-stream'
  t.same(buildInputSchema([], { source: undefined, mediaType: octets, required: true }, expander()), { type: 'object', properties: { body: {} }, required: ['body'] })
  t.same(buildInputSchema([], { source: undefined, mediaType: undefined, required: false }, expander()), { type: 'object', properties: { body: {} } }, 'no content at all')
  const notSchema = { schema: { $ref: '#/components/schemas/Text' }, location: 'b' }
  t.same(buildInputSchema([], { source: notSchema, mediaType: 'text/plain', required: false }, expander()), { type: 'object', properties: { body: {} } }, 'a schema that is not one')
})

t.test('the body comes last and replaces a parameter called body', async t => {
  const schema = buildInputSchema([param({ name: 'body', in: 'query', required: true })], { source: { schema: { type: 'object' }, location: 'b' }, mediaType: 'application/json', required: false }, expander())
  t.same(schema, { type: 'object', properties: { body: { type: 'object' } } })
})

t.test('a parameter named __proto__ is an ordinary property', async t => {
  const schema = buildInputSchema([param({ name: '__proto__', in: 'query', required: true })], undefined, expander())
  t.same(Object.keys(schema.properties as object), ['__proto__'])
  t.equal(Object.getPrototypeOf(schema.properties), Object.prototype)
  t.same(JSON.parse(JSON.stringify(schema)).required, ['__proto__'])
})
