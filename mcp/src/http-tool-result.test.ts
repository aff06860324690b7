// An upstream's answer as a tool result: JSON as text (and structuredContent for an object), text as
// text, other types as an embedded base64 resource, non-2xx as isError, and a body that claims JSON
// but is not fails the call.
import t from 'tap'
import { toToolResult } from './http-tool-result.js'

const answer = (status: number, contentType: string | undefined, body: string | Buffer) => ({ status, contentType, body: Buffer.from(body), url: 'http://api.test/x' })

t.test('a JSON object is text content and structuredContent; an array is text only', async t => {
  t.same(toToolResult(answer(200, 'application/json; charset=utf-8', '{"a":1}')), { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } })
  t.same(toToolResult(answer(200, 'application/problem+json', '[1]')), { content: [{ type: 'text', text: '[1]' }] })
})

t.test('a non-2xx status is an isError result without structuredContent', async t => {
  t.same(toToolResult(answer(404, 'application/json', '{"error":"no"}')), { content: [{ type: 'text', text: '{"error":"no"}' }], isError: true })
  t.same(toToolResult(answer(500, undefined, '')), { content: [{ type: 'text', text: 'HTTP 500' }], isError: true })
})

t.test('text stays text; other types become an embedded resource in base64', async t => {
  t.same(toToolResult(answer(200, 'text/csv', 'a,b')), { content: [{ type: 'text', text: 'a,b' }] })
  t.same(toToolResult(answer(200, 'image/png', Buffer.from([1, 2, 3]))), { content: [{ type: 'resource', resource: { uri: 'http://api.test/x', mimeType: 'image/png', blob: 'AQID' } }] })
})

t.test('a body that says JSON and is not fails the call as an upstream failure', async t => {
  t.throws(() => toToolResult(answer(200, 'application/json', 'not json')), { name: 'ToolServerError', kind: 'upstream', code: 'gate_evaluation_failed' })
})

t.test('JSON past the reader limits still reaches the agent as text, without structuredContent', async t => {
  const deep = '{"a":'.repeat(100) + '1' + '}'.repeat(100)
  t.same(toToolResult(answer(200, 'application/json', deep)), { content: [{ type: 'text', text: deep }] })
})
