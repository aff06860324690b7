// End to end: memory of the real `gate mcp serve-http` stays bounded under many short sessions. 10,000
// sessions (GATE_MCP_RSS_SESSIONS to change it), each initialize, notifications/initialized, one
// tools/call and DELETE over loopback, 8 at a time (receipts and sessions in SQLite files, so what is
// measured is the edge, not an in-memory receipt store; one wrapped server for every session,
// --shared-server, so what is measured is the edge, not 10,000 process starts: the per-session
// processes are checked to end with their sessions in mcp-serve-relay.test.ts). After them, read from /admin/health after a full
// collection and compared with the readings after the first 500: the live heap may grow by at most
// 24 MiB (a retained session of a few KiB would add tens of MiB), RSS by at most 160 MiB (native memory:
// SQLite's page caches fill as the files grow and freed memory stays with the allocator, so RSS moved
// by -18 to +86 MiB between runs with a flat heap), and no session stays live.
import t from 'tap'
import { FIXTURE_SERVER_PATH } from '@gate/mcp/testing'
import { gateFiles } from '../testing/gate-files.js'
import { rawPost, rawRequest, rawSession, startGateMcpHttp } from '../testing/mcp-http-session.js'

const ADMIN_TOKEN = 'admin-token-for-mcp-memory-test'
const SESSIONS = Number(process.env.GATE_MCP_RSS_SESSIONS ?? 10_000)
const WARMUP = 500
const HEAP_BOUND_BYTES = 24 * 1024 * 1024
const RSS_BOUND_BYTES = 160 * 1024 * 1024
const CONCURRENCY = 8

// 10,000 sessions take minutes on a loaded two-core host
t.setTimeout(900_000)

t.test(`memory after ${SESSIONS} short sessions stays within bounds of the warmed-up edge`, async t => {
  const files = await gateFiles(t)
  const gate = await startGateMcpHttp(t, ['--listen', '127.0.0.1:0', '--receipt-store', files.db, '--authority-seed-file', files.seed, '--allow-tool', 'echo', '--shared-server', '--', process.execPath, FIXTURE_SERVER_PATH], {
    // each health reading follows a full collection (mcp-http-admin.ts): live memory, not garbage the
    // collector has not got round to (unforced, the heap after the run was 110 to 216 MiB in one CI run)
    env: { GATE_ADMIN_TOKEN: ADMIN_TOKEN, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc`.trim() },
  })
  const health = async () => (await rawRequest(`${gate.base}/admin/health`, 'GET', { authorization: `Bearer ${ADMIN_TOKEN}` })).json() as unknown as { sessions: number; streams: number; rssBytes: number; heapUsedBytes: number }
  const oneSession = async (n: number) => {
    const id = await rawSession(gate.url)
    const called = await rawPost(gate.url, { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'echo', arguments: { text: `${n}` } } }, { 'mcp-session-id': id })
    if (!called.text.includes(`echo: ${n}`)) throw new Error(`session ${n}: ${called.status} ${called.text}`)
    const deleted = await rawRequest(gate.url, 'DELETE', { 'mcp-session-id': id })
    if (deleted.status !== 200) throw new Error(`DELETE of session ${n}: ${deleted.status}`)
  }
  const run = async (from: number, to: number) => {
    let next = from
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < to) await oneSession(next++)
    }))
  }
  await run(0, WARMUP)
  const warmed = await health()
  await run(WARMUP, SESSIONS)
  const after = await health()
  t.equal(after.sessions, 0, 'no session stays live')
  t.equal(after.streams, 0, 'no stream stays open')
  const mib = (bytes: number) => Math.round(bytes / 1024 / 1024)
  t.ok(after.heapUsedBytes - warmed.heapUsedBytes <= HEAP_BOUND_BYTES, `live heap grew by ${mib(after.heapUsedBytes - warmed.heapUsedBytes)} MiB (${mib(warmed.heapUsedBytes)} → ${mib(after.heapUsedBytes)} MiB)`)
  t.ok(after.rssBytes - warmed.rssBytes <= RSS_BOUND_BYTES, `RSS grew by ${Math.round((after.rssBytes - warmed.rssBytes) / 1024 / 1024)} MiB (${Math.round(warmed.rssBytes / 1024 / 1024)} → ${Math.round(after.rssBytes / 1024 / 1024)} MiB; heap ${Math.round(warmed.heapUsedBytes / 1024 / 1024)} → ${Math.round(after.heapUsedBytes / 1024 / 1024)} MiB)`)
})
