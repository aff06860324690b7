import t from 'tap'
import { selectOutputSchema, selectRequestBody } from './select-schemas.js'
import { RefResolver } from './resolve-refs.js'

const resolver = new RefResolver({
  components: {
    requestBodies: { Pet: { required: true, content: { 'application/json': { schema: { title: 'pet body' } } } } },
    responses: { Ok: { content: { 'application/json': { schema: { title: 'shared ok' } } } } },
  },
})
const schemaOf = (s: { schema: unknown } | undefined) => s?.schema

t.test('the request body uses application/json first', async t => {
  const body = selectRequestBody(
    { requestBody: { content: { 'text/plain': { schema: { title: 'text' } }, 'application/json': { schema: { title: 'json' } } } } },
    resolver,
    'op',
  )
  t.same(schemaOf(body!.source), { title: 'json' })
  t.equal(body!.source!.location, 'op.requestBody.content.application/json.schema')
})

t.test('otherwise the first content type that has a schema', async t => {
  const body = selectRequestBody(
    { requestBody: { content: { 'application/xml': {}, 'application/x-www-form-urlencoded': { schema: { title: 'form' } }, 'text/plain': { schema: { title: 't' } } } } },
    resolver,
    'op',
  )
  t.same(schemaOf(body!.source), { title: 'form' })
  t.equal(selectRequestBody({ requestBody: { content: { 'application/octet-stream': {} } } }, resolver, 'op')!.source, undefined)
})

t.test('requestBody.required is recorded, default false; a non-boolean is InvalidSpec', async t => {
  t.equal(selectRequestBody({ requestBody: { content: {} } }, resolver, 'op')!.required, false)
  t.equal(selectRequestBody({ requestBody: { required: true, content: {} } }, resolver, 'op')!.required, true)
  t.throws(() => selectRequestBody({ requestBody: { required: 'yes' } }, resolver, 'op'), { kind: 'InvalidSpec', message: 'InvalidSpec: op.requestBody.required (must be a boolean)' })
  t.equal(selectRequestBody({}, resolver, 'op'), undefined, 'no requestBody')
})

t.test('a $ref request body is resolved', async t => {
  const body = selectRequestBody({ requestBody: { $ref: '#/components/requestBodies/Pet' } }, resolver, 'op')
  t.same(body, { source: { schema: { title: 'pet body' }, location: 'components.requestBodies.Pet.content.application/json.schema' }, mediaType: 'application/json', required: true })
  t.throws(() => selectRequestBody({ requestBody: { $ref: '#/components/requestBodies/Nope' } }, resolver, 'op'), { name: 'OpenApiError', kind: 'UnresolvedRef' })
})

const response = (title: string) => ({ content: { 'application/json': { schema: { title } } } })

t.test('the output schema prefers 200, then 201, then other 2xx with a schema', async t => {
  t.same(schemaOf(selectOutputSchema({ responses: { '201': response('201'), '200': response('200'), '202': response('202') } }, resolver, 'op')), { title: '200' })
  t.same(schemaOf(selectOutputSchema({ responses: { '202': response('202'), '201': response('201') } }, resolver, 'op')), { title: '201' })
  t.same(schemaOf(selectOutputSchema({ responses: { '299': response('299'), '2XX': response('2XX'), '203': response('203'), default: response('d') } }, resolver, 'op')), { title: '203' })
  t.same(schemaOf(selectOutputSchema({ responses: { '2XX': response('range'), '404': response('404') } }, resolver, 'op')), { title: 'range' })
})

t.test('a preferred response without a schema gives way to the next one with a schema', async t => {
  t.same(schemaOf(selectOutputSchema({ responses: { '200': { description: 'no body' }, '201': response('201') } }, resolver, 'op')), { title: '201' })
  t.same(schemaOf(selectOutputSchema({ responses: { '204': {}, '206': { content: { 'text/csv': { schema: { title: 'csv' } } } } } }, resolver, 'op')), { title: 'csv' })
})

t.test('no 2xx response with a schema means no output schema', async t => {
  t.equal(selectOutputSchema({ responses: { '200': { description: 'ok' }, '400': response('e'), default: response('d') } }, resolver, 'op'), undefined)
  t.equal(selectOutputSchema({}, resolver, 'op'), undefined)
})

t.test('a $ref response is resolved', async t => {
  t.same(schemaOf(selectOutputSchema({ responses: { '200': { $ref: '#/components/responses/Ok' } } }, resolver, 'op')), { title: 'shared ok' })
})

t.test('the body media type is the one whose schema was chosen, else application/json, else the first listed', async t => {
  const pick = (content: unknown) => selectRequestBody({ requestBody: { content } }, new RefResolver({}), 'op')!.mediaType
  t.equal(pick({ 'text/plain': { schema: {} }, 'application/json': { schema: {} } }), 'application/json')
  t.equal(pick({ 'text/plain': {}, 'application/xml': { schema: {} } }), 'application/xml')
  t.equal(pick({ 'text/plain': {}, 'application/json': {} }), 'application/json')
  t.equal(pick({ 'application/octet-stream': {} }), 'application/octet-stream')
  t.equal(pick(undefined), undefined)
})
