// Trust-control query performance over 1,000,000 stored receipts, on SQLite and then on PostgreSQL in the
// same run (query-postgres.ts): latency of GET /v1/receipts/query for a selective filter, a broad filter
// paged through, and analytics over one day (plus over the whole corpus), measured against the real
// `gate trust serve` process (latency.ts); then receipt ingest: on SQLite group commit at concurrency 50
// (as the sidecar writes) with and without that query load running, on PostgreSQL the store's appends and
// the ingest route sidecars ship to.
//
// The corpus (corpus.ts) is generated through the store API. Rows are stored as the kernel writes them,
// without their core form, under the key of the seed the trust-control process is started with: a query
// page converts (re-signs) and stores the rows it is first to read, as in production, so the latencies
// include those conversions. The SQLite corpus is kept in os.tmpdir() under a version-stamped name and
// reused by later runs, with the core forms the previous run stored cleared first; the PostgreSQL one is
// generated in a fresh server each run. Without PostgreSQL (docs/postgres.md) the run says so and fails.
//
//   npx tsc -b bench && node bench/dist/trust/query.js [rows]         (default 1,000,000)
//   node bench/dist/trust/query.js indexes [rows]                      (ingest cost of each index)
//   BENCH_TRUST_ROWS, BENCH_INGEST_ROWS, BENCH_ROUNDS override rows, receipts per ingest round (40,000)
//   and ingest rounds (5) of `npm run bench -- trust-query`.
//
// Targets: selective query p99 <= 20 ms; analytics over 1M receipts <= 1 s; on SQLite ingest while
// queries run >= 80% of the rate without them; on PostgreSQL ingest through the route >= 10,000/s.
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { openDatabase, openReceiptStore, RECEIPT_QUERY_INDEXES, RECEIPT_TRUST_INDEXES, type ReceiptStore } from '../../../sidecar/dist/stores/index.js'
import type { ReceiptRow } from '@gate/trust'
import { spawnGate } from '../../../sidecar/dist/testing/spawn-gate.js'
import { median, printTable } from '../measure.js'
import { writtenBytes } from '../proc-stats.js'
import { AUTHORITY_SEED, CAPABILITIES, createRow, DAY, DAYS, SERVICE_TOKEN, T0, TENANT_TOKEN } from './corpus.js'
import { createClient, describeQueryTargets, measureQueryLatency, metQueryTargets, waitForLine, type Client } from './latency.js'
import { postgresSkipReason, runPostgres } from './query-postgres.js'

/** Bump when the generated corpus changes shape, so stale files are not reused. */
const CORPUS_VERSION = 4
const TARGET_INGEST_RATIO = 0.8

export interface TrustQueryOptions {
  /** Stored receipts, default 1,000,000. */
  rows?: number
  /** Receipts appended per ingest round, default 40,000. */
  ingestRows?: number
  /** Ingest rounds per condition (interleaved, the median is reported), default 5. */
  rounds?: number
}

export async function run(options: TrustQueryOptions = {}): Promise<{ ok: boolean }> {
  const rows = options.rows ?? Number(process.env.BENCH_TRUST_ROWS ?? 1_000_000)
  const ingestRows = options.ingestRows ?? Number(process.env.BENCH_INGEST_ROWS ?? 40_000)
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5)
  const { path, generatedMs } = await ensureCorpus(rows)
  // A long-running service has its file in the page cache; so should the measurement (a cold 5 GB file
  // measures the disk instead).
  const warmStarted = performance.now()
  // and no writeback of an earlier run's writes still competing for the disk
  spawnSync('sync')
  warmPageCache(path)
  process.stderr.write(`page cache warmed in ${Math.round(performance.now() - warmStarted)} ms\n`)
  const dir = mkdtempSync(join(tmpdir(), 'gate-trust-bench-'))
  writeFileSync(join(dir, 'service-token'), SERVICE_TOKEN, { mode: 0o600 })
  writeFileSync(join(dir, 'tenant-token'), TENANT_TOKEN, { mode: 0o600 })
  writeFileSync(join(dir, 'authority-seed'), AUTHORITY_SEED.toString('hex'), { mode: 0o600 })
  const gate = await spawnGate(
    ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', path, '--authority-seed-file', join(dir, 'authority-seed'), '--service-token-file', join(dir, 'service-token'), '--tenant-token', `tenant-3=${join(dir, 'tenant-token')}`,
      // this suite measures queries and ingest; the tree's own costs are the transparency suite's
      '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: '' }, readyTimeoutMs: 600_000 },
  )
  let ok = true
  try {
    // steady state: measure once the analytics rollup has folded in the stored receipts
    const warmMs = await waitForLine(gate, /analytics rollup ready .*\((\d+) ms\)/)
    process.stderr.write(`analytics rollup warmed in ${warmMs} ms\n`)
    const client = createClient(gate.url)
    const latency = await measureQueryLatency(client, rows)
    ok = metQueryTargets(latency)
    printTable(
      `SQLite: trust-control query latency over ${rows.toLocaleString('en-US')} receipts (${(statSync(path).size / 1e9).toFixed(2)} GB file; generated in ${generatedMs === 0 ? 'an earlier run' : `${Math.round(generatedMs / 1000)} s`}), ` +
        `real gate trust serve, Node ${process.versions.node}; ${(await countCoreForms(path)).toLocaleString('en-US')} receipts got their core form on first read`,
      latency.results,
    )

    const ingest = await measureIngest(path, client, ingestRows, rounds)
    printTable(`SQLite: receipt ingest into the same store, group commit at concurrency 50 (${ingestRows.toLocaleString('en-US')} receipts per round, median of ${rounds})`, ingest.table)
    ok = ingest.ratio >= TARGET_INGEST_RATIO && ok
    process.stdout.write(
      `SQLite targets: ${describeQueryTargets(latency)}; ` +
        `ingest under query load >= ${TARGET_INGEST_RATIO * 100}%: ${(ingest.ratio * 100).toFixed(0)}% ${ingest.ratio >= TARGET_INGEST_RATIO ? 'met' : 'MISSED'}\n`,
    )
  } finally {
    await gate.stop('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
    // keep the reused corpus at its size: drop what the ingest measurement appended
    await resetCorpus(path, rows)
  }
  // the same corpus and measurements on PostgreSQL, in the same run (query-postgres.ts)
  const skip = postgresSkipReason()
  if (skip !== undefined) {
    process.stdout.write(`PostgreSQL: not measured: ${skip}\n`)
    return { ok: false }
  }
  const pg = await runPostgres({ rows, ingestRows, rounds })
  return { ok: ok && pg.ok }
}

function warmPageCache(path: string): void {
  const fd = openSync(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(8 * 1024 * 1024)
    while (readSync(fd, buffer, 0, buffer.length, null) > 0) {
      // reading is the point
    }
  } finally {
    closeSync(fd)
  }
}

// Back to the generated corpus: without what the ingest measurement appended, and without the core
// forms the queries stored, so every run measures first reads.
async function resetCorpus(path: string, rows: number): Promise<void> {
  const db = await openDatabase(path)
  try {
    await db.run('DELETE FROM receipts WHERE seq > ?', [rows])
    await db.run('UPDATE receipts SET core_json = NULL WHERE core_json IS NOT NULL')
    await db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } finally {
    await db.close()
  }
}

async function countCoreForms(path: string): Promise<number> {
  const db = await openDatabase(path)
  try {
    return (await db.get<{ n: number }>('SELECT count(*) AS n FROM receipts WHERE core_json IS NOT NULL'))?.n ?? 0
  } finally {
    await db.close()
  }
}


// ---- ingest ----

async function measureIngest(path: string, client: Client, count: number, rounds: number) {
  const store = await openReceiptStore(path)
  let next = (await store.query.latestSeq()) + 1
  const quiet: number[] = []
  const loaded: number[] = []
  let queries = 0
  try {
    for (let round = 0; round < rounds; round++) {
      quiet.push(await ingest(store, next, count))
      next += count
      // the query load: one client in a closed loop over the three query kinds
      let running = true
      let i = 0
      const load = (async () => {
        while (running) {
          const k = i++
          if (k % 10 === 9) await client.get(`/v1/receipts/analytics?since=${T0 + (k % DAYS) * DAY}&until=${T0 + (k % DAYS) * DAY + DAY - 1}`)
          else if (k % 3 === 0) await client.get(`/v1/receipts/query?outcome=deny&limit=200&cursor=${(k * 9973) % 900_000}`)
          else await client.get(`/v1/receipts/query?capabilityId=cap-${(k * 7919) % CAPABILITIES}&limit=50`)
          queries++
        }
      })()
      loaded.push(await ingest(store, next, count))
      next += count
      running = false
      await load
    }
  } finally {
    await store.close()
  }
  const q = median(quiet)
  const l = median(loaded)
  return {
    ratio: l / q,
    table: <Record<string, string | number>[]>[
      { condition: 'no queries', 'receipts/s': q, rounds: quiet.map(r => Math.round(r)).join(', '), ratio: '100%' },
      { condition: `queries running (${queries} answered)`, 'receipts/s': l, rounds: loaded.map(r => Math.round(r)).join(', '), ratio: `${((l / q) * 100).toFixed(0)}%` },
    ],
  }
}

async function ingest(store: ReceiptStore, first: number, count: number): Promise<number> {
  let issued = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (issued < count) {
        const n = first + issued++
        await store.log.append(createRow(n, T0 + DAYS * DAY + Math.floor(n / 1000)))
      }
    }),
  )
  return (count * 1000) / (performance.now() - started)
}

// ---- index cost ----

/**
 * Ingest rate and bytes written per receipt with no trust index, each chosen index alone, all of them,
 * and the rejected alternative of one plain index per filter column.
 */
export async function runIndexCosts(rows = 100_000): Promise<Record<string, string | number>[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-trust-index-'))
  const name = (sql: string) => /INDEX IF NOT EXISTS (\w+)/.exec(sql)![1]!
  const [covering, ...restTrust] = RECEIPT_TRUST_INDEXES
  const layouts: [string, string[]][] = [
    ['none (receipts_by_id only)', []],
    ...RECEIPT_TRUST_INDEXES.map((sql): [string, string[]] => [`chosen: ${name(sql)}`, [sql]]),
    ['chosen: all of them (gate trust serve)', [...RECEIPT_TRUST_INDEXES]],
    ...RECEIPT_QUERY_INDEXES.filter(sql => !sql.includes('(timestamp)')).map((sql): [string, string[]] => [`rejected: ${name(sql)} (plain)`, [sql]]),
    ['rejected: receipts_by_outcome (plain)', ['CREATE INDEX IF NOT EXISTS receipts_by_outcome ON receipts (outcome)']],
    ['rejected: one plain index per filter column + covering', [covering!, ...RECEIPT_QUERY_INDEXES.filter(sql => !sql.includes('(timestamp)')), 'CREATE INDEX IF NOT EXISTS receipts_by_outcome ON receipts (outcome)', ...restTrust.filter(sql => !sql.includes('_bucket'))]],
  ]
  const table: Record<string, string | number>[] = []
  try {
    for (const [name, ddl] of layouts) {
      const rates: number[] = []
      const bytes: number[] = []
      for (let round = 0; round < 2; round++) {
        const path = join(dir, `index-${table.length}-${round}.db`)
        await (await openReceiptStore(path)).close()
        const db = await openDatabase(path)
        for (const sql of ddl) await db.exec(sql)
        await db.close()
        const store = await openReceiptStore(path)
        const before = writtenBytes()
        rates.push(await ingest(store, 0, rows))
        const after = writtenBytes()
        bytes.push(before === undefined || after === undefined ? NaN : (after - before) / rows / 1024)
        await store.close()
        rmSync(path, { force: true })
      }
      table.push({ layout: name, 'receipts/s': median(rates), 'KB written/receipt': median(bytes) })
      process.stderr.write(`  ${name}: ${Math.round(median(rates))} receipts/s\n`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const base = table[0]!['receipts/s'] as number
  for (const r of table) r['vs none'] = `${(((r['receipts/s'] as number) / base) * 100).toFixed(0)}%`
  printTable(`ingest cost of each trust-control index: ${rows.toLocaleString('en-US')} receipts into a fresh file, group commit at concurrency 50, median of 2`, table)
  return table
}

// ---- the corpus ----

async function ensureCorpus(rows: number): Promise<{ path: string; generatedMs: number }> {
  const path = join(tmpdir(), `gate-trust-bench-v${CORPUS_VERSION}-${rows}.db`)
  const stamp = `${path}.complete`
  if (existsSync(path) && existsSync(stamp)) {
    await resetCorpus(path, rows)
    return { path, generatedMs: 0 }
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`, stamp]) rmSync(file, { force: true })
  process.stderr.write(`generating ${rows.toLocaleString('en-US')} receipts into ${path} (kept for later runs)\n`)
  const started = performance.now()
  const store = await openReceiptStore(path)
  try {
    for (let base = 0; base < rows; base += 2048) {
      const batch: ReceiptRow[] = []
      for (let n = base; n < Math.min(rows, base + 2048); n++) batch.push(createRow(n, T0 + Math.floor((n * DAYS * DAY) / rows)))
      await store.log.appendMany(batch)
      if (base % 100_000 === 0 && base > 0) process.stderr.write(`  ${base.toLocaleString('en-US')}\n`)
    }
    process.stderr.write('  creating the trust-control indexes\n')
    await store.createTrustIndexes()
  } finally {
    await store.close()
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
  return { path, generatedMs: performance.now() - started }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'indexes') {
    await runIndexCosts(process.argv[3] === undefined ? undefined : Number(process.argv[3]))
  } else {
    const rows = process.argv[2] === undefined ? undefined : Number(process.argv[2])
    const { ok } = await run({ rows })
    process.exitCode = ok ? 0 : 1
  }
}
