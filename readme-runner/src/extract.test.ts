import t from 'tap'
import { extractCommands, isBackground, missingLines, withoutBackgroundMark } from './extract.js'

const README = [
  '# Title',
  '',
  '```sh',
  'npm ci && npm start      # set-up, with a comment',
  '# a comment line',
  '',
  'curl -s -X POST http://127.0.0.1:9090/pets \\',
  "  -H 'content-type: application/json' \\",
  "  -d '{\"name\":\"Tom\"}'",
  'node server.js &',
  '```',
  '',
  '```text',
  '{"id":"1",…}',
  '',
  'second line',
  '```',
  '',
  '```js',
  'app.use(gate())',
  '```',
  '',
  '- in a list:',
  '  ```sh',
  '  npx gate --help',
  '  ```',
  '',
  '```sh',
  'echo last',
  '```',
  'prose between',
  '```text',
  'not the output of echo last',
  '```',
].join('\n')

t.test('sh blocks, in order: comments dropped, continuations joined, background marked', async t => {
  const blocks = extractCommands(README)
  t.equal(blocks.length, 3, 'the js block is no command')
  t.same(blocks[0]!.map(c => [c.line, c.text, c.background]), [
    [4, 'npm ci && npm start      # set-up, with a comment', false],
    [7, `curl -s -X POST http://127.0.0.1:9090/pets -H 'content-type: application/json' -d '{"name":"Tom"}'`, false],
    [10, 'node server.js &', true],
  ])
  t.same(blocks[1]!.map(c => c.text), ['npx gate --help'], 'an indented fence in a list')
})

t.test('a text block right after an sh block is the output of its last command', async t => {
  const [first, , last] = extractCommands(README)
  t.same(first![2]!.expected, ['{"id":"1",…}', 'second line'])
  t.same(first![0]!.expected, [])
  t.same(last![0]!.expected, [], 'prose between: no expected output')
})

t.test('background: a trailing & (a comment may follow), never &&', async t => {
  t.equal(isBackground('node a.js &'), true)
  t.equal(isBackground('PORT=1 node a.js & # keeps running'), true)
  t.equal(isBackground('npm ci && npm start'), false)
  t.equal(isBackground('a &&'), false)
  t.equal(withoutBackgroundMark('PORT=1 node a.js & # keeps running'), 'PORT=1 node a.js')
})

t.test('expected lines: … matches anything, other characters literally', async t => {
  const output = 'HTTP/1.1 403 Forbidden\n{"error":"gate_access_denied","receipt_id":"ab12"}\n'
  t.same(missingLines(['{"error":"gate_access_denied","receipt_id":"…"}', 'HTTP/1.1 403'], output), [])
  t.same(missingLines(['{"error":"gate_access_denied"}', 'a.b'], output), ['{"error":"gate_access_denied"}', 'a.b'])
})
