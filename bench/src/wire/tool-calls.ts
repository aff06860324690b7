// Tool calls over Gate's native wire against the same calls over the MCP stdio edge and against the
// tool server directly, in one run: the fixture MCP server's `echo` (@gate/mcp/testing) called
// directly over stdio (the SDK's Client), through `gate mcp serve` (stdio, the session's capability),
// and through `gate wire serve` on a Unix socket (the SDK's WireClient, the same capability in every
// tool_call_request). Both Gate sides decide with the same token and write a durable receipt per call.
// Reported: calls per second with CONCURRENCY in flight, and the median and p99 latency of one call at
// a time. BENCH_DURATION_SECS, BENCH_WARMUP_SECS and BENCH_ROUNDS override the defaults (5, 3, 2);
// rounds are interleaved so a burst of load from elsewhere hits every side alike.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { bytesToHex, createSigner, generateSecret, signCapability } from '@gate/sdk'
import { RawJson, WireClient } from '@gate/sdk/wire'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { GATE_MAIN } from '@gate/sidecar/testing'
import { median, printTable, quantile } from '../measure.js'

const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const WARMUP_SECS = Number(process.env.BENCH_WARMUP_SECS ?? 3)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2))
const CONCURRENCY = 8
/** Goal: the wire carries at least 0.8x the calls of the MCP stdio edge (same kernel, same receipts). */
const TARGET_RATIO = 0.8

type Side = 'direct' | 'mcp' | 'wire'
type Caller = () => Promise<void>

async function drive(call: Caller, seconds: number, concurrency: number): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = []
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now()
        await call()
        latencies.push(performance.now() - t0)
      }
    }),
  )
  return { perSecond: (latencies.length * 1000) / (performance.now() - start), latencies }
}

async function mcpClient(command: string, args: string[], env?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'gate-bench', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore', env: env === undefined ? undefined : { ...(process.env as Record<string, string>), ...env } }))
  return client
}

function mcpEcho(client: Client): Caller {
  return async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'ping' } })
    if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result.content)}`)
  }
}

/** `gate wire serve` on a Unix socket; resolves once it listens. */
function startWireServe(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [GATE_MAIN, 'wire', 'serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8')
      if (log.includes('wire (gate-wire-v1) listening on')) resolve(child)
    })
    child.once('exit', code => reject(new Error(`gate wire serve exited ${code}:\n${log}`)))
  })
}

export async function run(): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-wire-bench-'))
  const seed = generateSecret()
  writeFileSync(join(dir, 'seed'), bytesToHex(seed), { mode: 0o600 })
  const now = Math.floor(Date.now() / 1000)
  const token = signCapability({ schema: 'gate.capability.v1', id: 'cap-bench', subject: 'ab'.repeat(32), scope: { grants: [{ server_id: 'fx', tool_name: 'echo' }] }, issued_at: now, expires_at: now + 86_400 }, createSigner({ secret: seed }))
  const tokenText = JSON.stringify(token)
  writeFileSync(join(dir, 'capability.json'), tokenText)
  const direct = await mcpClient(process.execPath, [FIXTURE_SERVER_PATH])
  const mcp = await mcpClient(process.execPath, [
    GATE_MAIN, 'mcp', 'serve', '--receipt-store', join(dir, 'mcp', 'receipts.db'), '--authority-seed-file', join(dir, 'seed'),
    '--server-id', 'fx', '--capability-file', join(dir, 'capability.json'), '--', process.execPath, FIXTURE_SERVER_PATH,
  ])
  const socket = join(dir, 'wire.sock')
  const server = await startWireServe(['--listen', `unix:${socket}`, '--receipt-store', join(dir, 'wire', 'receipts.db'), '--authority-seed-file', join(dir, 'seed'), '--tool-server', `fx=${process.execPath} ${FIXTURE_SERVER_PATH}`])
  const wire = await WireClient.connect(socket)
  // an agent reads its token once and sends the same bytes with every call
  const capability = new RawJson(tokenText)
  try {
    const callers: Record<Side, Caller> = {
      direct: mcpEcho(direct),
      mcp: mcpEcho(mcp),
      wire: async () => {
        const { result } = await wire.callTool({ serverId: 'fx', tool: 'echo', params: { text: 'ping' }, capabilityToken: capability })
        if (result.status !== 'ok') throw new Error(`echo over the wire: ${JSON.stringify(result)}`)
      },
    }
    const sides: Side[] = ['direct', 'mcp', 'wire']
    for (const side of sides) await drive(callers[side], WARMUP_SECS, CONCURRENCY)
    const rate: Record<Side, number[]> = { direct: [], mcp: [], wire: [] }
    const latency: Record<Side, number[]> = { direct: [], mcp: [], wire: [] }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      for (const side of order) rate[side].push((await drive(callers[side], DURATION_SECS, CONCURRENCY)).perSecond)
      for (const side of order) latency[side].push(...(await drive(callers[side], DURATION_SECS, 1)).latencies)
    }
    const ratio = median(rate.wire) / median(rate.mcp)
    const ok = ratio >= TARGET_RATIO
    const label: Record<Side, string> = { direct: 'tool server directly (MCP over stdio)', mcp: 'through gate mcp serve (stdio)', wire: 'through gate wire serve (unix socket)' }
    printTable(
      'wire: tool calls (echo), the native wire against the MCP stdio edge against the tool server',
      sides.map(side => ({
        side: label[side],
        [`calls/s (${CONCURRENCY} in flight)`]: median(rate[side]),
        'p50 ms (1 in flight)': median(latency[side]),
        'p99 ms': quantile(latency[side], 0.99),
        'vs mcp serve': side === 'wire' ? `${ratio.toFixed(2)}x (goal >= ${TARGET_RATIO}x)${ok ? '' : ' MISSED'}` : '',
      })),
    )
    return { ok }
  } finally {
    await wire.close().catch(() => {})
    server.kill('SIGTERM')
    await mcp.close()
    await direct.close()
    await new Promise(resolve => server.once('exit', resolve))
    rmSync(dir, { recursive: true, force: true })
  }
}
