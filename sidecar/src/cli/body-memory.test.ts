// Memory amplification (issue 24, item 5) against the real processes: deeply nested JSON bodies of
// 5 MiB, sent at once to /gate/evaluate, once took `gate api protect` from ~105 MB to 1.58 GB of RSS
// (ten bodies) and `gate sidecar` to 2.9 GB (twenty), because JSON.parse built millions of nested
// arrays before anything looked at the depth. Each is now a 400 gate_bad_request from the JSON
// reader's depth limit, and the process's peak RSS (VmHWM of /proc/PID/status, the kernel's own
// high-water mark) stays under 600 MB. A normal evaluation still answers afterwards.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { ANONYMOUS_CALLER, uuidv7 } from '@gate/sdk'
import { request } from 'undici'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { call } from '../testing/http-client.js'

const TOKEN = 'memory-test-control-token-0123456789'
const PEAK_RSS_BOUND_MB = 600
const HALF = 2.5 * 1024 * 1024
// 5 MiB of valid JSON nested 2.6 million levels deep
const NESTED = Buffer.from('['.repeat(HALF) + ']'.repeat(HALF))

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1])
  return kb / 1024
}

async function sendNested(url: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const res = await request(`${url}/gate/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: NESTED })
      const text = await res.body.text()
      return res.statusCode === 400 && /nests deeper/.test(text) ? 400 : res.statusCode
    }),
  )
}

async function expectStillServing(t: Test, gate: GateProcess): Promise<void> {
  const body = { request_id: uuidv7(), method: 'GET', path: '/pets', route_pattern: '/pets', caller: ANONYMOUS_CALLER, timestamp: Math.floor(Date.now() / 1000) }
  const normal = await call(`${gate.url}/gate/evaluate`, { body })
  t.equal(normal.status, 200, 'a normal evaluation still answers')
  t.match(normal.body, { verdict: { verdict: 'allow' } })
}

/** Starts `gate <args>`, sends `count` nested bodies at once: each a 400, peak RSS under the bound, still serving. */
async function expectNestedBodiesBounded(t: Test, args: string[], count: number): Promise<void> {
  const gate = await spawnGate([...args, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const statuses = await sendNested(gate.url, count)
  t.same(statuses, Array(count).fill(400), 'every nested body: 400 gate_bad_request (too deep)')
  const peak = peakRssMb(gate.child.pid!)
  t.ok(peak < PEAK_RSS_BOUND_MB, `peak RSS ${peak.toFixed(0)} MB < ${PEAK_RSS_BOUND_MB} MB`)
  await expectStillServing(t, gate)
}

const skip = process.platform !== 'linux' ? 'reads /proc/PID/status (Linux only)' : false

t.test('gate api protect: ten concurrent 5 MiB nested bodies are refused and peak RSS stays under 600 MB', { skip }, async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  await expectNestedBodiesBounded(t, ['api', 'protect', '--upstream', upstream.url, '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], 10)
})

t.test('gate sidecar: twenty concurrent 5 MiB nested bodies are refused and peak RSS stays under 600 MB', { skip }, async t => {
  const { spec, seed, db } = await gateFiles(t)
  await expectNestedBodiesBounded(t, ['sidecar', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], 20)
})

t.test('a body that would take the bytes in flight past 128 MiB is refused with 503 and Retry-After, then served once they drain', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed, '--listen', '127.0.0.1:0'], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const { port } = new URL(gate.url)
  // fourteen uploads that stop 1 MiB short of their declared 10 MiB: 126 MiB held by the server
  const held: Socket[] = []
  const written: Promise<void>[] = []
  for (let i = 0; i < 14; i++) {
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    socket.write(`POST /gate/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`)
    written.push(new Promise(resolve => socket.write(Buffer.alloc(9 * 1024 * 1024, 0x20), () => resolve())))
    held.push(socket)
  }
  t.teardown(() => held.forEach(s => s.destroy()))
  // every held byte has left this process (the server reads the rest from the kernel at its pace)
  await Promise.all(written)
  const probe = Buffer.alloc(4 * 1024 * 1024, 0x20)
  const send = async () => {
    const res = await request(`${gate.url}/gate/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: probe })
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], text: await res.body.text() }
  }
  // the held bytes arrive at the server's pace (slow on a loaded host): probe until they are all
  // charged, for at most 60 s
  const until = Date.now() + 60_000
  let answer = await send()
  while (answer.status !== 503 && Date.now() < until) {
    await new Promise(resolve => setTimeout(resolve, 100))
    answer = await send()
  }
  t.equal(answer.status, 503, 'a 4 MiB body on top of 126 MiB in flight is refused')
  t.equal(answer.retryAfter, '1')
  t.match(JSON.parse(answer.text), { error: 'gate_sidecar_unavailable', message: /request body bytes in flight/ })
  for (const socket of held) socket.destroy()
  answer = await send()
  for (let tries = 0; answer.status === 503 && tries < 100; tries++) answer = await send()
  t.equal(answer.status, 400, 'once the uploads are gone the same body is read (and refused as JSON: only spaces)')
  await expectStillServing(t, gate)
})
