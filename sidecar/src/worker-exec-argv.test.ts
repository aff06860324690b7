import t from 'tap'
import { workerExecArgv } from './worker-exec-argv.js'

t.test('flags that say how the main script was given are dropped, the others kept in order', async t => {
  t.same(workerExecArgv(['--input-type=module', '--max-old-space-size=100', '-e', 'code()']), ['--max-old-space-size=100'])
  t.same(workerExecArgv(['--input-type', 'module', '--eval', 'x', '--experimental-sqlite']), ['--experimental-sqlite'])
  t.same(workerExecArgv(['-p', '1', '--print=2', '--eval=3', '--enable-source-maps']), ['--enable-source-maps'])
  t.same(workerExecArgv([]), [])
})
