// A tool call of an OpenAPI operation becomes its HTTP request: path parameters percent-encoded into
// the template under the upstream's base path, query parameters (arrays repeat the key), and `body` in
// the operation's media type.
import t from 'tap'
import { buildOperationRequest } from './operation-request.js'

const base = new URL('http://api.test/v1/')

t.test('path parameters are percent-encoded: an argument never adds a segment or leaves the base path', async t => {
  const req = buildOperationRequest({ method: 'GET', path: '/pets/{id}', parameters: [{ name: 'id', in: 'path' }] }, { id: '../admin?x=1' }, base)
  t.same(req, { method: 'GET', path: '/v1/pets/..%2Fadmin%3Fx%3D1', headers: { accept: 'application/json, */*;q=0.5' }, body: undefined })
})

t.test('query parameters: scalars as text, arrays repeat the key, absent and null are left out', async t => {
  const call = { method: 'GET' as const, path: '/pets', parameters: [{ name: 'tag', in: 'query' as const }, { name: 'limit', in: 'query' as const }, { name: 'q', in: 'query' as const }] }
  t.equal(buildOperationRequest(call, { tag: ['a', 'b c'], limit: 5, q: null }, base).path, '/v1/pets?tag=a&tag=b+c&limit=5')
})

t.test('a JSON body is the JSON text of body; an operation without a media type gets application/json', async t => {
  const req = buildOperationRequest({ method: 'POST', path: '/pets', parameters: [], body: { mediaType: 'application/merge-patch+json', required: true } }, { body: { name: 'Rex' } }, base)
  t.same([req.body, req.headers['content-type']], ['{"name":"Rex"}', 'application/merge-patch+json'])
  const plain = buildOperationRequest({ method: 'POST', path: '/pets', parameters: [], body: { mediaType: undefined, required: false } }, { body: [1] }, base)
  t.same([plain.body, plain.headers['content-type']], ['[1]', 'application/json'])
})

t.test('non-JSON bodies: a form from an object, a string as is, anything else as JSON text', async t => {
  const form = buildOperationRequest({ method: 'POST', path: '/f', parameters: [], body: { mediaType: 'application/x-www-form-urlencoded', required: true } }, { body: { a: 'x y', n: 2 } }, base)
  t.same([form.body, form.headers['content-type']], ['a=x+y&n=2', 'application/x-www-form-urlencoded'])
  const text = buildOperationRequest({ method: 'PUT', path: '/f', parameters: [], body: { mediaType: 'application/octet-stream', required: true } }, { body: 'raw bytes' }, base)
  t.same([text.body, text.headers['content-type']], ['raw bytes', 'application/octet-stream'])
  const other = buildOperationRequest({ method: 'PUT', path: '/f', parameters: [], body: { mediaType: 'text/csv', required: true } }, { body: { a: 1 } }, base)
  t.equal(other.body, '{"a":1}')
})

t.test('no body argument sends no body', async t => {
  const req = buildOperationRequest({ method: 'POST', path: '/pets', parameters: [], body: { mediaType: 'application/json', required: false } }, {}, new URL('http://api.test'))
  t.same([req.path, req.body, req.headers['content-type']], ['/pets', undefined, undefined])
})

t.test('a path variable the document did not declare as a parameter fails the call instead of being sent literally', async t => {
  t.throws(() => buildOperationRequest({ method: 'POST', path: '/pets/{id}/adopt', parameters: [] }, { id: '1' }, base), { name: 'ToolServerError', kind: 'protocol', message: /\{id\} is not a declared path parameter/ })
})
