// MCP tool calls over Streamable HTTP: SDK Clients (one session each) calling a trivial tool
// (`test_simple_text` of the conformance server, @gate/mcp/testing) on the server's own HTTP transport
// directly, and through the real `gate mcp serve-http` wrapping the same server over stdio (one server
// process per session; a durable receipt store and edge-session store, a signed receipt per call), in
// one run; with BENCH_BASELINE_DIR the older checkout's `gate` too. Reported for 1 and 10 concurrent
// sessions, one call in flight per session: calls per second, median and p99 latency, what Gate adds,
// and the CPU per call of the Gate process (its own threads, not the wrapped servers) against the direct
// server's. Goals as the stdio table's, at 10 sessions. Same BENCH_DURATION_SECS, BENCH_WARMUP_SECS and
// BENCH_ROUNDS, rounds interleaved.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { scopedSignalFetch } from '@gate/mcp'
import { CONFORMANCE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from '@gate/sidecar/testing'
import { baselineGateMain } from '../baseline.js'
import { median, printTable, quantile } from '../measure.js'
import { cpuMicros } from '../proc-stats.js'
import { TARGET_CPU_MICROS, TARGET_RATIO } from './targets.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const SESSION_COUNTS = [1, 10] as const
const TOOL = 'test_simple_text'

interface Endpoint {
  label: string
  child: ChildProcess
  url: string
}

/** Starts `args` and resolves with the URL its output names once `pattern` matches. */
function start(label: string, args: string[], pattern: RegExp, env: NodeJS.ProcessEnv = {}): Promise<Endpoint> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let out = ''
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = pattern.exec(out)
      if (m !== null) resolve({ label, child, url: m[1]! })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', code => reject(new Error(`${args.join(' ')} exited (${code}):\n${out}`)))
  })
}

async function sessions(url: string, count: number): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const client = new Client({ name: 'gate-bench-http', version: '1.0.0' })
      // each request its own abort signal: the transport's long-lived one collects a listener per request until GC
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: scopedSignalFetch() }))
      return client
    }),
  )
}

/** Every session calls in a loop for `seconds`: calls per second, each call's latency (ms), CPU µs of `pid` per call. */
async function drive(clients: Client[], seconds: number, pid: number | undefined): Promise<{ perSecond: number; latencies: number[]; cpuPerCall: number | undefined }> {
  const latencies: number[] = []
  const cpu0 = pid === undefined ? undefined : cpuMicros(`/proc/${pid}`)
  const begin = performance.now()
  const end = begin + seconds * 1000
  await Promise.all(
    clients.map(async client => {
      while (performance.now() < end) {
        const t0 = performance.now()
        const result = await client.callTool({ name: TOOL, arguments: {} })
        if (result.isError === true) throw new Error(`${TOOL} failed: ${JSON.stringify(result.content)}`)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const cpu1 = pid === undefined ? undefined : cpuMicros(`/proc/${pid}`)
  return { perSecond: (latencies.length * 1000) / (performance.now() - begin), latencies, cpuPerCall: cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / latencies.length }
}

function startEdge(label: string, main: string, dir: string): Promise<Endpoint> {
  return start(
    label,
    [main, 'mcp', 'serve-http', '--listen', '127.0.0.1:0', '--receipt-store', join(dir, `${label.replace(/\W+/g, '-')}.db`), '--allow-tool', TOOL, '--max-sessions', '200', '--max-sessions-per-caller', '200', '--', process.execPath, CONFORMANCE_SERVER_PATH],
    /mcp edge listening on (http:\/\/[^\s"]+)/,
    { GATE_CONTROL_TOKEN: 'bench-control-token-0123456789' },
  )
}

export async function runHttpEdge(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-mcp-http-bench-'))
  const baseline = baselineGateMain()
  const endpoints = [await start('direct (the server over HTTP)', [CONFORMANCE_SERVER_PATH, '--http', '0'], /conformance server on (http:\/\/\S+)/), await startEdge('through gate mcp serve-http', GATE_MAIN, dir)]
  if (baseline !== undefined) endpoints.push(await startEdge("through the baseline's gate mcp serve-http", baseline, dir))
  const opened: Client[] = []
  try {
    const rows: Record<string, string | number>[] = []
    let ok = true
    for (const count of SESSION_COUNTS) {
      const clients: Client[][] = []
      for (const endpoint of endpoints) clients.push(await sessions(endpoint.url, count))
      opened.push(...clients.flat())
      for (let i = 0; i < endpoints.length; i++) await drive(clients[i]!, WARMUP_SECS, endpoints[i]!.child.pid)
      const rate = endpoints.map(() => [] as number[])
      const latency = endpoints.map(() => [] as number[])
      const cpu = endpoints.map(() => [] as number[])
      for (let round = 0; round < ROUNDS; round++) {
        const order = endpoints.map((_, i) => i)
        if (round % 2 === 1) order.reverse()
        for (const i of order) {
          const r = await drive(clients[i]!, DURATION_SECS, endpoints[i]!.child.pid)
          rate[i]!.push(r.perSecond)
          latency[i]!.push(...r.latencies)
          if (r.cpuPerCall !== undefined) cpu[i]!.push(r.cpuPerCall)
        }
      }
      const graded = count === SESSION_COUNTS[SESSION_COUNTS.length - 1]
      endpoints.forEach((endpoint, i) => {
        const ratio = median(rate[i]!) / median(rate[0]!)
        const cpuPerCall = cpu[i]!.length === 0 ? undefined : median(cpu[i]!)
        const met = ratio >= TARGET_RATIO && cpuPerCall !== undefined && cpuPerCall <= TARGET_CPU_MICROS
        if (graded && i === 1 && !met) ok = false
        rows.push({
          sessions: String(count),
          side: endpoint.label,
          'calls/s': median(rate[i]!),
          'p50 ms': median(latency[i]!),
          'p99 ms': quantile(latency[i]!, 0.99),
          'added p50 ms': i === 0 ? '' : median(latency[i]!) - median(latency[0]!),
          'added p99 ms': i === 0 ? '' : quantile(latency[i]!, 0.99) - quantile(latency[0]!, 0.99),
          'CPU µs/call': cpuPerCall === undefined ? '' : Math.round(cpuPerCall),
          ratio: i === 0 ? '' : `${ratio.toFixed(2)}x${graded && i === 1 ? ` (goals >= ${TARGET_RATIO}x, <= ${TARGET_CPU_MICROS} µs)${met ? '' : ' MISSED'}` : ''}`,
        })
      })
      for (const client of clients.flat()) await client.close()
    }
    printTable('mcp: tools/call over Streamable HTTP (one call in flight per session; CPU: the server directly, else the Gate process alone)', rows)
    return { ok }
  } finally {
    for (const client of opened) await client.close().catch(() => {})
    for (const endpoint of endpoints) endpoint.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
