// MCP tool calls through Gate: the SDK's Client calling a trivial tool (`echo` of the fixture server,
// @gate/mcp/testing) directly over stdio, and through the real `gate mcp serve` wrapping the same
// server (a durable receipt store, a signed receipt per call), in one run; with BENCH_BASELINE_DIR the
// `gate` of that older built checkout too (before and after, same rounds). Reported: tools/call round
// trips per second with CONCURRENCY calls in flight on the one stdio session, the median and p99 latency
// of one call at a time, what Gate adds to each, and the CPU per call of the Gate process (its own
// threads, not the wrapped server) against the server's own. Goals: >= 0.8x direct round trips, Gate's
// CPU per call <= 0.5 ms. BENCH_DURATION_SECS, BENCH_WARMUP_SECS and BENCH_ROUNDS override the defaults
// (5, 3, 2); rounds are interleaved so a burst of load from elsewhere hits every side alike. The hosted
// edge's table (http-edge.ts, `gate mcp serve-http`) follows in the same run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from '@gate/sidecar/testing'
import { baselineGateMain } from '../baseline.js'
import { median, printTable, quantile } from '../measure.js'
import { cpuMicros } from '../proc-stats.js'
import { runHttpEdge } from './http-edge.js'
import { TARGET_CPU_MICROS, TARGET_RATIO } from './targets.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const CONCURRENCY = 8

interface Side {
  label: string
  client: Client
  pid: number | undefined
}

async function connect(label: string, command: string, args: string[]): Promise<Side> {
  const client = new Client({ name: 'gate-bench', version: '1.0.0' })
  const transport = new StdioClientTransport({ command, args, stderr: 'ignore' })
  await client.connect(transport)
  return { label, client, pid: transport.pid ?? undefined }
}

async function echo(client: Client): Promise<void> {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'ping' } })
  if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result.content)}`)
}

/** Calls for `seconds` with `concurrency` callers; round trips per second, each call's latency (ms), and the CPU (µs) of `pid` per call. */
async function drive(side: Side, seconds: number, concurrency: number): Promise<{ perSecond: number; latencies: number[]; cpuPerCall: number | undefined }> {
  const latencies: number[] = []
  const cpu0 = side.pid === undefined ? undefined : cpuMicros(`/proc/${side.pid}`)
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now()
        await echo(side.client)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const cpu1 = side.pid === undefined ? undefined : cpuMicros(`/proc/${side.pid}`)
  const cpuPerCall = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / latencies.length
  return { perSecond: (latencies.length * 1000) / (performance.now() - start), latencies, cpuPerCall }
}

/** A gate's `mcp serve` wrapping the fixture, with its own receipt store under `dir`. */
function gateSide(label: string, main: string, dir: string): Promise<Side> {
  return connect(label, process.execPath, [main, 'mcp', 'serve', '--receipt-store', join(dir, `${label.replace(/\W+/g, '-')}.db`), '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH])
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-mcp-bench-'))
  const baseline = baselineGateMain()
  const sides: Side[] = [await connect('direct', process.execPath, [FIXTURE_SERVER_PATH]), await gateSide('through gate mcp serve', GATE_MAIN, dir)]
  if (baseline !== undefined) sides.push(await gateSide('through the baseline\'s gate mcp serve', baseline, dir))
  try {
    for (const side of sides) await drive(side, WARMUP_SECS, CONCURRENCY)
    const rate = sides.map(() => [] as number[])
    const latency = sides.map(() => [] as number[])
    const cpu = sides.map(() => [] as number[])
    for (let round = 0; round < ROUNDS; round++) {
      const order = sides.map((_, i) => i)
      if (round % 2 === 1) order.reverse()
      for (const i of order) {
        const r = await drive(sides[i]!, DURATION_SECS, CONCURRENCY)
        rate[i]!.push(r.perSecond)
        if (r.cpuPerCall !== undefined) cpu[i]!.push(r.cpuPerCall)
      }
      for (const i of order) latency[i]!.push(...(await drive(sides[i]!, DURATION_SECS, 1)).latencies)
    }
    let ok = true
    const rows = sides.map((side, i) => {
      const ratio = median(rate[i]!) / median(rate[0]!)
      const cpuPerCall = cpu[i]!.length === 0 ? undefined : median(cpu[i]!)
      const graded = i === 1
      const met = ratio >= TARGET_RATIO && cpuPerCall !== undefined && cpuPerCall <= TARGET_CPU_MICROS
      if (graded && !met) ok = false
      return {
        side: side.label,
        [`calls/s (${CONCURRENCY} in flight)`]: median(rate[i]!),
        'p50 ms (1 in flight)': median(latency[i]!),
        'p99 ms': quantile(latency[i]!, 0.99),
        'added p50 ms': i === 0 ? '' : median(latency[i]!) - median(latency[0]!),
        'added p99 ms': i === 0 ? '' : quantile(latency[i]!, 0.99) - quantile(latency[0]!, 0.99),
        [i === 0 ? 'CPU µs/call' : 'CPU µs/call']: cpuPerCall === undefined ? '' : Math.round(cpuPerCall),
        ratio: i === 0 ? '' : `${ratio.toFixed(2)}x${graded ? ` (goals >= ${TARGET_RATIO}x, <= ${TARGET_CPU_MICROS} µs)${met ? '' : ' MISSED'}` : ''}`,
      }
    })
    printTable('mcp: tools/call round trips (echo over stdio; CPU: the server directly, else the Gate process alone)', rows)
    const http = await runHttpEdge()
    return { ok: ok && http.ok }
  } finally {
    for (const side of sides) await side.client.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
}
