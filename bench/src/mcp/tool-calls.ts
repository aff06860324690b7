// MCP tool calls through Gate: the SDK's Client calling a trivial tool (`echo` of the fixture server,
// @gate/mcp/testing) directly over stdio, and through the real `gate mcp serve` wrapping the same
// server (a durable receipt store, a signed receipt per call), in one run. Reported: tools/call round
// trips per second with CONCURRENCY calls in flight on the one stdio session, and the median and p99
// latency of one call at a time, with the latency Gate adds. Goal: wrapped >= 0.5x direct round trips.
// BENCH_DURATION_SECS, BENCH_WARMUP_SECS and BENCH_ROUNDS override the defaults (5, 3, 2); rounds are
// interleaved (direct, wrapped, direct, ...) so a burst of load from elsewhere hits both alike. The
// hosted edge's table (http-edge.ts, `gate mcp serve-http`) follows in the same run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from '@gate/sidecar/testing'
import { median, printTable, quantile } from '../measure.js'
import { runHttpEdge } from './http-edge.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const CONCURRENCY = 8
const TARGET_RATIO = 0.5

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'gate-bench', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }))
  return client
}

async function echo(client: Client): Promise<void> {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'ping' } })
  if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result.content)}`)
}

/** Calls for `seconds` with `concurrency` callers; round trips per second and each call's latency (ms). */
async function drive(client: Client, seconds: number, concurrency: number): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = []
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now()
        await echo(client)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  return { perSecond: (latencies.length * 1000) / (performance.now() - start), latencies }
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-mcp-bench-'))
  const direct = await connect(process.execPath, [FIXTURE_SERVER_PATH])
  const wrapped = await connect(process.execPath, [
    GATE_MAIN, 'mcp', 'serve', '--receipt-store', join(dir, 'receipts.db'), '--allow-tool', 'echo', '--', process.execPath, FIXTURE_SERVER_PATH,
  ])
  try {
    const sides = { direct, wrapped }
    for (const client of Object.values(sides)) await drive(client, WARMUP_SECS, CONCURRENCY)
    const rate = { direct: [] as number[], wrapped: [] as number[] }
    const latency = { direct: [] as number[], wrapped: [] as number[] }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['direct', 'wrapped'] as const) : (['wrapped', 'direct'] as const)
      for (const side of order) rate[side].push((await drive(sides[side], DURATION_SECS, CONCURRENCY)).perSecond)
      for (const side of order) latency[side].push(...(await drive(sides[side], DURATION_SECS, 1)).latencies)
    }
    const ratio = median(rate.wrapped) / median(rate.direct)
    const ok = ratio >= TARGET_RATIO
    printTable('mcp: tools/call round trips (echo over stdio)', [
      {
        side: 'direct',
        [`calls/s (${CONCURRENCY} in flight)`]: median(rate.direct),
        'median ms (1 in flight)': median(latency.direct),
        'p99 ms': quantile(latency.direct, 0.99),
        'added median ms': '',
        'added p99 ms': '',
        ratio: '',
      },
      {
        side: 'through gate mcp serve',
        [`calls/s (${CONCURRENCY} in flight)`]: median(rate.wrapped),
        'median ms (1 in flight)': median(latency.wrapped),
        'p99 ms': quantile(latency.wrapped, 0.99),
        'added median ms': median(latency.wrapped) - median(latency.direct),
        'added p99 ms': quantile(latency.wrapped, 0.99) - quantile(latency.direct, 0.99),
        ratio: `${ratio.toFixed(2)}x (goal >= ${TARGET_RATIO}x)${ok ? '' : ' MISSED'}`,
      },
    ])
    const http = await runHttpEdge()
    return { ok: ok && http.ok }
  } finally {
    await wrapped.close()
    await direct.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
