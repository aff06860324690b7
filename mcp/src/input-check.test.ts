// The edge's input check: unknown tools and arguments outside the input_schema are problems found
// before any decision or upstream call; draft-07 schemas compile; an uncompilable one fails closed.
import t from 'tap'
import { InputCheck } from './input-check.js'

const tool = (inputSchema: Record<string, unknown>) => ({ name: 'echo', inputSchema: inputSchema as { type: 'object' } })

t.test('arguments that fit pass; others name the first problem', async t => {
  const check = new InputCheck()
  const echo = tool({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false })
  t.equal(check.check('fs', 'echo', echo, { text: 'hi' }), undefined)
  t.same(check.check('fs', 'echo', echo, { text: 1 }), { code: 'arguments_invalid', reason: 'arguments/text must be string (input_schema of echo)' })
  t.match(check.check('fs', 'echo', echo, {}), { code: 'arguments_invalid', reason: /must have required property 'text'/ })
})

t.test('an unknown tool is tool_unknown', async t => {
  t.same(new InputCheck().check('fs', 'nope', undefined, {}), { code: 'tool_unknown', reason: 'tool server fs has no tool "nope"' })
})

t.test('a draft-07 schema with unknown keywords compiles; an uncompilable one denies every call', async t => {
  const check = new InputCheck()
  const draft7 = tool({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer', example: 3 } } })
  t.equal(check.check('fs', 'echo', draft7, { n: 3 }), undefined)
  t.match(check.check('fs', 'echo', draft7, { n: 'x' }), { code: 'arguments_invalid' })
  t.match(check.check('fs', 'echo', tool({ type: 'object', properties: { n: { $ref: '#/nowhere' } } }), { n: 1 }), { code: 'arguments_invalid', reason: /cannot be compiled/ })
})
