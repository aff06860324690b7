// --tool-server commands split as a shell splits them, with nothing expanded.
import t from 'tap'
import { splitShellWords } from './shell-words.js'

t.test('words split on blanks; quotes and backslashes group and escape', async t => {
  t.same(splitShellWords('node  server.js\t--root /tmp'), ['node', 'server.js', '--root', '/tmp'])
  t.same(splitShellWords(`npx mcp-server-filesystem '/my dir' "a \\"b\\" c" x\\ y`), ['npx', 'mcp-server-filesystem', '/my dir', 'a "b" c', 'x y'])
  t.same(splitShellWords(`'it''s' "a"'b'c`), ['its', 'abc'], 'adjacent quoted parts join into one word')
  t.same(splitShellWords(`"" ''`), ['', ''], 'empty quotes are empty words')
  t.same(splitShellWords(`"\\n \\$ \\\\"`), ['\\n $ \\'], 'inside double quotes only \\, $, ` and " are escaped')
  t.same(splitShellWords(`'\\n'`), ['\\n'], 'single quotes keep backslashes')
  t.same(splitShellWords('   '), [])
})

t.test('nothing is expanded', async t => {
  t.same(splitShellWords('echo $HOME ~ * `id` $(id)'), ['echo', '$HOME', '~', '*', '`id`', '$(id)'])
})

t.test('unclosed quotes and a trailing backslash are configuration errors', async t => {
  for (const line of [`a 'b`, `a "b`, 'a \\']) t.throws(() => splitShellWords(line), { name: 'WireConfigError', code: 'gate_invalid_config' }, line)
})
