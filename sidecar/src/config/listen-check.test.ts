import t from 'tap'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { checkCanListen, listenFailure } from './listen-check.js'

t.test('a free address passes and stays free; port 0 is never probed', async () => {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise<void>(resolve => probe.close(() => resolve()))
  await checkCanListen({ host: '127.0.0.1', port })
  const again = createServer().listen(port, '127.0.0.1')
  await once(again, 'listening')
  await new Promise<void>(resolve => again.close(() => resolve()))
  await checkCanListen({ host: '127.0.0.1', port: 0 })
})

t.test('an address in use throws gate_invalid_config naming it and --listen', async t => {
  const holder = createServer().listen(0, '127.0.0.1')
  await once(holder, 'listening')
  t.teardown(() => new Promise<void>(resolve => holder.close(() => resolve())))
  const { port } = holder.address() as AddressInfo
  await t.rejects(checkCanListen({ host: '127.0.0.1', port }), {
    code: 'gate_invalid_config',
    message: `cannot listen on 127.0.0.1:${port} (EADDRINUSE, the address is in use by another process: stop it, or choose another port with --listen HOST:PORT)`,
  })
})

t.test('listenFailure words the common codes, brackets IPv6 hosts, and keeps the cause', async t => {
  const denied = Object.assign(new Error('listen EACCES'), { code: 'EACCES' })
  const failure = listenFailure({ host: '::1', port: 80 }, denied)
  t.equal(failure.message, 'cannot listen on [::1]:80 (EACCES, permission denied (ports below 1024 need privileges): choose another port with --listen HOST:PORT)')
  t.equal(failure.cause, denied)
  t.match(listenFailure({ host: '10.9.9.9', port: 1 }, Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' })).message, 'no network interface of this machine has that address')
  t.match(listenFailure({ host: '127.0.0.1', port: 1 }, Object.assign(new Error('x'), { code: 'EOTHER' })).message, '(EOTHER, check --listen HOST:PORT)')
})
