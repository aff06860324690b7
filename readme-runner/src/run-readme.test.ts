// runReadme with a real bash: a README whose server runs in the background, whose state (a variable, a
// cd) carries over, and whose shown output is checked; and each way a command can fail.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { extractCommands } from './extract.js'
import { freePort } from './ports.js'
import { killedJobSpecs, runReadme } from './run-readme.js'

// a tiny server the README starts: prints its address, answers its name
const SERVER = `require('node:http').createServer((q, s) => s.end('hello ' + process.env.NAME)).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('up on http://127.0.0.1:' + process.env.PORT))`

async function run(t: Test, markdown: string) {
  const dir = t.testdir({ 'server.cjs': SERVER, sub: {} })
  const moved = new Map([[3000, await freePort()]])
  const lines: string[] = []
  const commands = extractCommands(markdown).flat()
  const done = runReadme('TEST.md', commands, { cwd: dir, env: process.env, moved, outputDir: join(dir, 'out'), commandTimeoutMs: 20_000, readyTimeoutMs: 20_000, log: l => lines.push(l) })
  return { done, lines, moved, dir }
}

t.test('a README that works: state carries over, the background server is awaited, output is checked', async t => {
  const { done, lines, moved } = await run(
    t,
    ['```sh', 'export NAME=reader', 'NAME=$NAME PORT=3000 node server.cjs &', 'cd sub', 'curl -s http://127.0.0.1:3000/', '```', '```text', 'hello reader', '```', '```sh', 'kill %1', '```'].join('\n'),
  )
  await done
  t.equal(lines.length, 5)
  t.match(lines[1], `PORT=${moved.get(3000)} node server.cjs &`, 'the documented port was moved')
})

t.test('kill %1 waits for the job to stop, so the next job started is %1 again', async t => {
  // a server that takes a while to stop, as gate does while it drains and flushes its receipts
  const slow = `${SERVER}; process.on('SIGTERM', () => setTimeout(() => process.exit(0), 700))`
  const dir = t.testdir({ 'slow.cjs': slow })
  const moved = new Map([[3000, await freePort()], [3001, await freePort()]])
  const readme = ['```sh', 'PORT=3000 node slow.cjs &', 'kill %1', 'PORT=3001 node slow.cjs &', 'kill %1', '```'].join('\n')
  const lines: string[] = []
  await runReadme('TEST.md', extractCommands(readme).flat(), { cwd: dir, env: process.env, moved, outputDir: join(dir, 'out'), commandTimeoutMs: 20_000, readyTimeoutMs: 20_000, log: l => lines.push(l) })
  t.equal(lines.length, 4, 'the second kill %1 found the second server')
})

t.test('killedJobSpecs reads the job specs a kill names', async t => {
  t.same(killedJobSpecs('kill %1 %2'), ['%1', '%2'])
  t.same(killedJobSpecs('kill -TERM %3; echo %4'), ['%3'])
  t.same(killedJobSpecs('curl -s http://x/%20'), [])
})

t.test('a failing command stops the run, naming the file, line, status and output', async t => {
  const { done } = await run(t, ['```sh', 'echo one', 'ls /no/such/dir', 'echo never', '```'].join('\n'))
  await t.rejects(done, { name: 'ReadmeCommandError', message: /^TEST\.md:3: ls \/no\/such\/dir\nexit status 2; it printed:\n.*No such file/ })
})

t.test('a pipeline fails when any command in it fails', async t => {
  const { done } = await run(t, ['```sh', 'ls /no/such/dir | tee listing.txt', '```'].join('\n'))
  await t.rejects(done, { message: /^TEST\.md:2: ls \/no\/such\/dir \| tee listing\.txt\nexit status 2/ })
})

t.test('output the README shows but the command does not print fails the run', async t => {
  const { done } = await run(t, ['```sh', 'echo hello', '```', '', '```text', 'goodbye', '```'].join('\n'))
  await t.rejects(done, { message: /the README shows output it did not print:\ngoodbye\nit printed:\nhello/ })
})

t.test('a background command that exits, or names no port, fails the run', async t => {
  const exits = await run(t, ['```sh', 'PORT=3000 node -e "process.exit(3)" &', '```'].join('\n'))
  await t.rejects(exits.done, { message: /it exited before it printed 127\.0\.0\.1:\d+/ })
  const portless = await run(t, ['```sh', 'node server.cjs &', '```'].join('\n'))
  await t.rejects(portless.done, { message: /a background command must name its port/ })
})

t.test('a server left in the foreground times out, and the session still ends', async t => {
  const dir = t.testdir({ 'server.cjs': SERVER })
  writeFileSync(join(dir, 'x'), '')
  const commands = extractCommands(['```sh', 'PORT=3000 node server.cjs', '```'].join('\n')).flat()
  const moved = new Map([[3000, await freePort()]])
  await t.rejects(runReadme('TEST.md', commands, { cwd: dir, env: process.env, moved, outputDir: join(dir, 'out'), commandTimeoutMs: 3000, log: () => {} }), {
    message: /did not finish within 3 s \(a server\? end its line with " &"\)/,
  })
})
