// Issue #30 benchmark: a sidecar joined to trust-control with --control-url against a standalone one, in
// one run (goal: within 10% of its throughput, since the hot path is unchanged: decisions read the
// mirrored revocations and followed keys from memory, receipts commit locally first), and the receipt
// outbox's drain rate. Both sidecars load /gate/evaluate with 50 connections, a GET allow and a POST
// with a valid token (issued by itself, or centrally), interleaved over BENCH_ROUNDS rounds of
// BENCH_DURATION_SECS after BENCH_WARMUP_SECS. The joined sidecar ships its receipts meanwhile, to a
// trust-control on the same host, which is part of the cost measured. Drain rate: the network to
// trust-control is cut (a TCP relay), the joined sidecar is loaded (receipts pile up in its outbox), the
// relay is restored and the time until /gate/health shows lag 0 is measured. CPU per request is read
// from /proc for the sidecar and for trust-control, up to the moment the joined sidecar's outbox is
// empty again, so the shipping of each round's receipts is charged to it (trust-control runs on the
// same cores here: its ingest, which verifies every signature, takes CPU the sidecar would otherwise have).
// Then the revocation latency of issue #41 (fleet-revocation.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { request } from 'undici'
import { createSigner, generateSecret } from '@gate/sdk'
import { PETS_SPEC_YAML, startTcpRelay } from '@gate/sidecar/testing'
import { runLoad, type LoadResult } from '../load.js'
import { median, printTable } from '../measure.js'
import { cpuMicros } from '../proc-stats.js'
import { evaluateBody, startProcess } from './evaluate.js'
import { runRevocationLatency } from './fleet-revocation.js'

const GATE_MAIN = fileURLToPath(new URL('../../../sidecar/dist/cli/main.js', import.meta.url))
const TOKEN = 'bench-fleet-service-token-0123456789'
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 8)
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
/** Issue #30: with --control-url, at least 90% of the standalone throughput. */
const TARGET_RATIO = 0.9
const JSON_HEADERS = { 'content-type': 'application/json' }

async function issue(url: string): Promise<string> {
  const res = await request(`${url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, ...JSON_HEADERS },
    body: JSON.stringify({ subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
  })
  const { capability } = (await res.body.json()) as { capability: unknown }
  return Buffer.from(JSON.stringify(capability)).toString('base64url')
}

async function outboxLag(url: string): Promise<number> {
  const health = (await (await request(`${url}/gate/health`)).body.json()) as { fleet: { outbox: { lag: number } } }
  return health.fleet.outbox.lag
}

type Scenario = [string, (durationSeconds: number) => Promise<LoadResult>, ChildProcess]

/** A measured round: the load's result, and the CPU (µs) the sidecar and trust-control spent per request. */
interface Measured {
  load: LoadResult
  sidecarCpu: number | undefined
  controlCpu: number | undefined
}

const log = (line: string) => process.stdout.write(`bench fleet: ${line}\n`)

export async function run(): Promise<{ ok: boolean }> {
  const throughput = await runThroughput()
  const revocation = await runRevocationLatency(log)
  return { ok: throughput.ok && revocation.ok }
}

async function runThroughput(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-bench-fleet-'))
  const children: ChildProcess[] = []
  const relays: { close(): Promise<void> }[] = []
  try {
    writeFileSync(join(dir, 'pets.yaml'), PETS_SPEC_YAML)
    writeFileSync(join(dir, 'service-token'), `${TOKEN}\n`, { mode: 0o600 })
    const control = await startProcess(process.execPath, [GATE_MAIN, 'trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', join(dir, 'control.db'), '--service-token-file', join(dir, 'service-token')], { GATE_CONTROL_TOKEN: '' })
    children.push(control.child)
    const relay = await startTcpRelay(Number(new URL(control.url).port))
    relays.push(relay)
    const sidecar = (name: string, extra: string[]) =>
      startProcess(process.execPath, [GATE_MAIN, 'sidecar', '--listen', '127.0.0.1:0', '--spec', join(dir, 'pets.yaml'), '--receipt-store', join(dir, `${name}.db`), ...extra], { GATE_CONTROL_TOKEN: TOKEN })
    const alone = await sidecar('standalone', [])
    children.push(alone.child)
    const joined = await sidecar('joined', ['--control-url', relay.url])
    children.push(joined.child)
    const tokens = { standalone: await issue(alone.url), joined: await issue(control.url) }
    const load = (url: string, method: 'GET' | 'POST', token?: string) => (durationSeconds: number) =>
      runLoad({ url: `${url}/gate/evaluate`, method: 'POST', body: evaluateBody(method, '/pets'), headers: token === undefined ? JSON_HEADERS : { ...JSON_HEADERS, 'x-gate-capability': token }, durationSeconds })
    const scenarios: Scenario[] = [
      ['standalone: GET allow', load(alone.url, 'GET'), alone.child],
      ['--control-url: GET allow', load(joined.url, 'GET'), joined.child],
      ['standalone: POST + valid token', load(alone.url, 'POST', tokens.standalone), alone.child],
      ['--control-url: POST + valid token', load(joined.url, 'POST', tokens.joined), joined.child],
    ]
    const cpuOf = (child: ChildProcess) => (child.pid === undefined ? undefined : cpuMicros(`/proc/${child.pid}`))
    const results = new Map<string, Measured[]>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, fn, child] of scenarios) {
        if (round === 0) {
          await fn(WARMUP_SECS)
          await waitForLag(joined.url, lag => lag === 0, 120_000)
        }
        const [sidecar0, control0] = [cpuOf(child), cpuOf(control.child)]
        const r = await fn(DURATION_SECS)
        // every receipt of the round shipped and stored: its ingest is part of what the round cost
        await waitForLag(joined.url, lag => lag === 0, 120_000)
        const [sidecar1, control1] = [cpuOf(child), cpuOf(control.child)]
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`)
        const per = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (b - a) / Math.max(1, r.requests))
        results.set(name, [...(results.get(name) ?? []), { load: r, sidecarCpu: per(sidecar0, sidecar1), controlCpu: per(control0, control1) }])
      }
    }
    const rps = (name: string) => median(results.get(name)!.map(r => r.load.requestsPerSecond))
    const cpu = (values: (number | undefined)[]) => (values.some(v => v === undefined) ? '' : Math.round(median(values as number[])))
    printTable(
      'fleet: /gate/evaluate, 50 connections, standalone vs --control-url (issue #30)',
      scenarios.map(([name]) => {
        const rs = results.get(name)!
        const peer = name.replace('--control-url', 'standalone')
        return {
          scenario: name,
          'req/s': rps(name),
          'p50 ms': median(rs.map(r => r.load.p50Ms)),
          'p99 ms': median(rs.map(r => r.load.p99Ms)),
          'vs standalone': `${((rps(name) / rps(peer)) * 100).toFixed(0)}%`,
          'sidecar CPU µs/req': cpu(rs.map(r => r.sidecarCpu)),
          'trust-control CPU µs/req': cpu(rs.map(r => r.controlCpu)),
        }
      }),
    )
    const ratios = ['GET allow', 'POST + valid token'].map(s => rps(`--control-url: ${s}`) / rps(`standalone: ${s}`))
    const ok = ratios.every(r => r >= TARGET_RATIO)
    process.stdout.write(`--control-url within ${Math.round((1 - TARGET_RATIO) * 100)}% of standalone throughput (GET ${(ratios[0]! * 100).toFixed(0)}%, POST ${(ratios[1]! * 100).toFixed(0)}%): ${ok ? 'MET' : 'MISSED'}\n`)

    // the outbox's drain rate: receipts piled up behind a cut network, then shipped
    await waitForLag(joined.url, lag => lag === 0, 60_000)
    await relay.cut()
    await load(joined.url, 'GET')(DURATION_SECS)
    const backlog = await outboxLag(joined.url)
    const started = performance.now()
    await relay.restore()
    await waitForLag(joined.url, lag => lag === 0, 300_000)
    const seconds = (performance.now() - started) / 1000
    process.stdout.write(`outbox drain: ${backlog} receipts shipped to trust-control in ${seconds.toFixed(2)} s (${Math.round(backlog / seconds)} receipts/s, batches of 250)\n`)
    log('done')
    return { ok }
  } finally {
    for (const relay of relays) await relay.close()
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map(child => (child.exitCode !== null ? undefined : new Promise(resolve => child.once('exit', resolve)))))
    rmSync(dir, { recursive: true, force: true })
  }
}

async function waitForLag(url: string, done: (lag: number) => boolean, limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs
  while (!done(await outboxLag(url))) {
    if (performance.now() > deadline) throw new Error(`the outbox of ${url} did not drain within ${limitMs / 1000} s`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}
