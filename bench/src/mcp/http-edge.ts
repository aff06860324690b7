// MCP tool calls over Streamable HTTP: SDK Clients (one session each) calling a trivial tool
// (`test_simple_text` of the conformance server, @gate/mcp/testing) on the server's own HTTP transport
// directly, and through the real `gate mcp serve-http` wrapping the same server over stdio (a durable
// receipt store and edge-session store, a signed receipt per call), in one run. Reported for 1 and 50
// concurrent sessions, one call in flight per session: calls per second, median and p99 latency, and the
// latency Gate adds. Goal: through the edge >= 0.5x direct calls per second at 50 sessions. Same
// BENCH_DURATION_SECS, BENCH_WARMUP_SECS and BENCH_ROUNDS as the stdio table, rounds interleaved.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { scopedSignalFetch } from '@gate/mcp'
import { CONFORMANCE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from '@gate/sidecar/testing'
import { median, printTable, quantile } from '../measure.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const SESSION_COUNTS = [1, 50] as const
const TARGET_RATIO = 0.5
const TOOL = 'test_simple_text'

/** Starts `args` and resolves with the URL its output names once `pattern` matches. */
function start(args: string[], pattern: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let out = ''
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = pattern.exec(out)
      if (m !== null) resolve({ child, url: m[1]! })
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

/** Every session calls in a loop for `seconds`: calls per second and each call's latency (ms). */
async function drive(clients: Client[], seconds: number): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = []
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
  return { perSecond: (latencies.length * 1000) / (performance.now() - begin), latencies }
}

export async function runHttpEdge(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-mcp-http-bench-'))
  const direct = await start([CONFORMANCE_SERVER_PATH, '--http', '0'], /conformance server on (http:\/\/\S+)/)
  const edge = await start(
    [GATE_MAIN, 'mcp', 'serve-http', '--listen', '127.0.0.1:0', '--receipt-store', join(dir, 'receipts.db'), '--allow-tool', TOOL, '--max-sessions', '200', '--max-sessions-per-caller', '200', '--', process.execPath, CONFORMANCE_SERVER_PATH],
    /mcp edge listening on (http:\/\/[^\s"]+)/,
    { GATE_CONTROL_TOKEN: 'bench-control-token-0123456789' },
  )
  const opened: Client[] = []
  try {
    const rows = []
    let ok = true
    for (const count of SESSION_COUNTS) {
      const sides = { direct: await sessions(direct.url, count), edge: await sessions(edge.url, count) }
      opened.push(...sides.direct, ...sides.edge)
      for (const clients of Object.values(sides)) await drive(clients, WARMUP_SECS)
      const rate = { direct: [] as number[], edge: [] as number[] }
      const latency = { direct: [] as number[], edge: [] as number[] }
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of round % 2 === 0 ? (['direct', 'edge'] as const) : (['edge', 'direct'] as const)) {
          const { perSecond, latencies } = await drive(sides[side], DURATION_SECS)
          rate[side].push(perSecond)
          latency[side].push(...latencies)
        }
      }
      const ratio = median(rate.edge) / median(rate.direct)
      const graded = count === SESSION_COUNTS[SESSION_COUNTS.length - 1]
      if (graded && ratio < TARGET_RATIO) ok = false
      rows.push(
        { sessions: String(count), side: 'direct (the server over HTTP)', 'calls/s': median(rate.direct), 'median ms': median(latency.direct), 'p99 ms': quantile(latency.direct, 0.99), 'added median ms': '', 'added p99 ms': '', ratio: '' },
        {
          sessions: String(count),
          side: 'through gate mcp serve-http',
          'calls/s': median(rate.edge),
          'median ms': median(latency.edge),
          'p99 ms': quantile(latency.edge, 0.99),
          'added median ms': median(latency.edge) - median(latency.direct),
          'added p99 ms': quantile(latency.edge, 0.99) - quantile(latency.direct, 0.99),
          ratio: `${ratio.toFixed(2)}x${graded ? ` (goal >= ${TARGET_RATIO}x)${ratio >= TARGET_RATIO ? '' : ' MISSED'}` : ''}`,
        },
      )
      for (const client of [...sides.direct, ...sides.edge]) await client.close()
    }
    printTable('mcp: tools/call over Streamable HTTP (one call in flight per session)', rows)
    return { ok }
  } finally {
    for (const client of opened) await client.close().catch(() => {})
    direct.child.kill('SIGKILL')
    edge.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
