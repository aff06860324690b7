// Slow clients (issue 24, item 10) against the real processes: a connection that trickles its headers
// (slowloris), one that trickles its body, and an idle keep-alive connection are each closed by the
// server. Every listener runs with small configured timeouts (--headers-timeout-secs 1
// --request-timeout-secs 2 --keep-alive-timeout-secs 1); the test asserts that the server closes the
// socket, never how long it took (the trickle itself runs until then, bounded by tap's timeout).
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'

const TOKEN = 'slow-clients-control-token-0123456789'
const TIMEOUTS = ['--headers-timeout-secs', '1', '--request-timeout-secs', '2', '--keep-alive-timeout-secs', '1']

interface Closed {
  /** What the server wrote before closing. */
  received: string
}

/** Opens a connection, runs `drive` on it, and resolves once the server has closed it. */
function untilServerCloses(url: string, drive: (socket: Socket) => () => void): Promise<Closed> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let received = ''
    let stop: (() => void) | undefined
    socket.on('data', chunk => (received += chunk.toString('latin1')))
    socket.on('error', err => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)))
    socket.on('connect', () => (stop = drive(socket)))
    socket.on('close', () => {
      stop?.()
      resolve({ received })
    })
  })
}

/** Writes `piece` every 100 ms, forever: the attack itself, not a wait. */
function trickle(socket: Socket, first: string, piece: string): () => void {
  socket.write(first)
  const timer = setInterval(() => socket.writable && socket.write(piece), 100)
  return () => clearInterval(timer)
}

async function expectSlowClientsCut(t: Test, gate: GateProcess, path: string, postPath: string): Promise<void> {
  const headers = await untilServerCloses(gate.url, s => trickle(s, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, 'X-Slow: 1\r\n'))
  t.match(headers.received, /^HTTP\/1\.1 408 /, 'a trickled head: 408, then the connection is closed')
  const body = await untilServerCloses(gate.url, s => trickle(s, `POST ${postPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`, ' '))
  t.pass(`a trickled body: the connection is closed (${body.received.split('\r\n')[0] || 'no answer'})`)
  const idle = await untilServerCloses(gate.url, s => {
    s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    return () => undefined
  })
  t.match(idle.received, /^HTTP\/1\.1 \d{3} /, 'an idle keep-alive connection: answered, then closed')
  t.notMatch(idle.received, /connection: close/i, 'closed by the keep-alive timeout, not asked to close')
}

t.test('gate sidecar cuts slow and idle connections', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...TIMEOUTS], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  await expectSlowClientsCut(t, gate, '/gate/live', '/gate/evaluate')
})

t.test('gate api protect cuts slow and idle connections', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  const gate = await spawnGate(['api', 'protect', '--upstream', upstream.url, '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, ...TIMEOUTS], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  await expectSlowClientsCut(t, gate, '/pets', '/pets')
})

t.test('gate trust serve cuts slow and idle connections', async t => {
  const { dir, seed, db } = await gateFiles(t)
  const tokenFile = join(dir, 'service-token')
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  const gate = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', db, '--authority-seed-file', seed, '--service-token-file', tokenFile, ...TIMEOUTS], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => gate.stop('SIGKILL'))
  await expectSlowClientsCut(t, gate, '/health', '/v1/revocations')
})

t.test('a headers timeout longer than the request timeout is a usage error', async t => {
  const { runGate } = await import('../testing/spawn-gate.js')
  const r = await runGate(['sidecar', '--allow-ephemeral-receipts', '--headers-timeout-secs', '5', '--request-timeout-secs', '2'])
  t.equal(r.code, 2)
  t.match(r.stderr, /--headers-timeout-secs \(5\) must not exceed --request-timeout-secs \(2\)/)
})
