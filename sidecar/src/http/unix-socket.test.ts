// The Gate server on a Unix domain socket: created 0600, removed on close, a stale socket cleared at
// start, and nothing else at the path ever removed or followed.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call } from '@gate/sdk/middleware-testing'
import { sendJson } from '@gate/sdk/server'
import { Router } from './router.js'
import { createGateServer } from './server.js'
import { removeStaleSocket } from './unix-socket.js'

/** A fresh directory for sockets (t.testdir() paths can be longer than a socket path may be). */
function socketDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'gate-unix-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function gateServer(t: Test) {
  const gate = createGateServer({ router: new Router().add('GET', '/gate/live', (_req, res) => sendJson(res, 200, { status: 'healthy' })) })
  t.teardown(() => gate.drain(100))
  return gate
}

/** A socket file nobody listens on any more, as a process killed while serving leaves it. */
function staleSocket(path: string): void {
  const child = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`])
  if (!existsSync(path)) throw new Error(`no stale socket at ${path} (child: ${child.signal ?? child.status})`)
}

t.test('the socket is created owner-only, answers, and is removed on close', async t => {
  const path = join(socketDir(t), 'gate.sock')
  const gate = createGateServer({ router: new Router().add('GET', '/gate/live', (_req, res) => sendJson(res, 200, { status: 'healthy' })) })
  await gate.listenOnSocket(path)
  const stat = lstatSync(path)
  t.ok(stat.isSocket())
  t.equal((stat.mode & 0o777).toString(8), '600')
  t.same((await call(`unix:${path}`, 'GET', '/gate/live')).json, { status: 'healthy' })
  await gate.drain(100)
  t.notOk(existsSync(path), 'the socket file is gone after close')
})

t.test('a stale socket (its process died) is removed at start', async t => {
  const path = join(socketDir(t), 'gate.sock')
  staleSocket(path)
  t.ok(lstatSync(path).isSocket(), 'a stale socket is there')
  await removeStaleSocket(path)
  const gate = gateServer(t)
  await gate.listenOnSocket(path)
  t.equal((await call(`unix:${path}`, 'GET', '/gate/live')).status, 200)
})

t.test('a socket another process serves, a symlink or a regular file refuse the start and stay', async t => {
  const dir = socketDir(t)
  const served = join(dir, 'served.sock')
  const other = createServer()
  other.listen(served)
  await once(other, 'listening')
  t.teardown(() => other.close())
  await t.rejects(removeStaleSocket(served), { code: 'gate_invalid_config', message: /another process is serving/ })
  t.ok(lstatSync(served).isSocket(), 'the served socket is untouched')

  const target = join(dir, 'precious.txt')
  writeFileSync(target, 'keep me')
  const link = join(dir, 'link.sock')
  symlinkSync(target, link)
  await t.rejects(removeStaleSocket(link), { message: /symbolic link/ })
  t.ok(lstatSync(link).isSymbolicLink(), 'the symlink is untouched')
  t.equal(readFileSync(target, 'utf8'), 'keep me', 'and so is what it points to')

  await t.rejects(removeStaleSocket(target), { message: /not a socket/ })
  t.equal(readFileSync(target, 'utf8'), 'keep me')

  // binding never follows a symlink either: bind(2) refuses a path that exists
  await t.rejects(gateServer(t).listenOnSocket(link), { code: 'EADDRINUSE' })
  t.equal(readFileSync(target, 'utf8'), 'keep me')
})

t.test('a path that does not exist yet is fine', async t => {
  await removeStaleSocket(join(socketDir(t), 'nothing-here.sock'))
  t.pass('nothing to remove')
})
