import t from 'tap'
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { closeWorker, startWorker, workerExecArgv } from './worker-threads.js'

const run = promisify(execFile)

t.test('flags that say how the main script was given are dropped, the others kept in order', async t => {
  t.same(workerExecArgv(['--input-type=module', '--max-old-space-size=100', '-e', 'code()']), ['--max-old-space-size=100'])
  t.same(workerExecArgv(['--input-type', 'module', '--eval', 'x', '--experimental-sqlite']), ['--experimental-sqlite'])
  t.same(workerExecArgv(['-p', '1', '--print=2', '--eval=3', '--enable-source-maps']), ['--enable-source-maps'])
  t.same(workerExecArgv([]), [])
})

t.test('closeWorker lets a thread that answers the request exit, and terminates one that does not', async t => {
  const polite = new Worker("require('node:worker_threads').parentPort.once('message', m => { if (m === 'close') process.exit(0) })", { eval: true })
  let politeCode: number | undefined
  polite.once('exit', code => (politeCode = code))
  // running first: a busy machine can take seconds to start a thread, and that is not what is tested
  await once(polite, 'online')
  await closeWorker(polite, 'close', 5000)
  t.equal(politeCode, 0, 'exited by itself, with code 0')

  const deaf = new Worker("require('node:worker_threads').parentPort.on('message', () => {})", { eval: true })
  let deafCode: number | undefined
  deaf.once('exit', code => (deafCode = code))
  await once(deaf, 'online')
  const started = Date.now()
  await closeWorker(deaf, 'close', 200)
  t.ok(Date.now() - started >= 190, 'waited for the deadline')
  t.equal(deafCode, 1, 'then terminated (exit code 1)')
})

t.test('startWorker resolves on a ready first message, and rejects naming why otherwise', async t => {
  const dir = t.testdir({
    'ready.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.postMessage({ ready: true })\nparentPort.once('message', () => process.exit(0))\n",
    'refuses.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.postMessage({ ready: false, error: 'no such file' })\n",
    'exits.mjs': 'process.exit(3)\n',
  })
  const url = (name: string) => pathToFileURL(join(dir, name))
  const worker = await startWorker(url('ready.mjs'), {}, 'the test thread')
  await closeWorker(worker, 'close', 5000)
  await t.rejects(startWorker(url('refuses.mjs'), {}, 'the test thread could not open x'), { message: 'the test thread could not open x: no such file' })
  await t.rejects(startWorker(url('exits.mjs'), {}, 'the test thread'), { message: 'the test thread: the thread exited with code 3' })
})

t.test('a process started with flags Node refuses in a thread (--v8-pool-size) still gets its threads', async t => {
  const dir = t.testdir({
    'ready.mjs': "import { parentPort } from 'node:worker_threads'\nparentPort.postMessage({ ready: true })\nparentPort.once('message', () => process.exit(0))\n",
  })
  const here = new URL('./worker-threads.js', import.meta.url).href
  const script = `import { startWorker, closeWorker } from ${JSON.stringify(here)}
const worker = await startWorker(new URL(${JSON.stringify(pathToFileURL(join(dir, 'ready.mjs')).href)}), {}, 'the test thread')
await closeWorker(worker, 'close', 5000)
console.log('started')`
  for (const flags of [['--v8-pool-size=2'], ['--title', 'gate-test', '--v8-pool-size=2', '--single-threaded-gc']]) {
    const { stdout } = await run(process.execPath, [...flags, '--input-type=module', '-e', script])
    t.equal(stdout.trim(), 'started', flags.join(' '))
  }
})
