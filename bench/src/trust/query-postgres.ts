// The trust-query bench on PostgreSQL, in the same run as SQLite (query.ts): the same corpus (corpus.ts)
// in a fresh PostgreSQL server (the test harness's: the Debian postgresql package, loopback, a new data
// directory per run, default settings but fsync off, as in the tests), the same query measurements
// (latency.ts) against `gate trust serve --database-url`, then the ingest rate two ways:
//   - the store: PgReceiptLog appends at concurrency 50 (group commit), as a node's own writes go;
//   - the route sidecars use: POST /v1/receipts/ingest, batches of 500 receipts signed by an enrolled key
//     (every signature verified before the batch is stored), 4 batches in flight.
// Targets (issues 29 and 41): selective and agent-route p99 <= 20 ms, analytics and the operator report
// <= 1 s, ingest through the route >= 10,000 receipts/s.
//
// The corpus is generated anew each run (about a minute per million rows on a quiet machine), then
// VACUUM ANALYZE, as a running database's autovacuum would have done.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSigner, generateSecret, signHttpReceiptJson, type HttpReceiptBody } from '@gate/sdk'
import { request } from 'undici'
import { openPgStores, type PgStores } from '@gate/trust/postgres'
import { receiptBody, startPostgres } from '@gate/trust/testing'
import { spawnGate } from '../../../sidecar/dist/testing/spawn-gate.js'
import { median, printTable } from '../measure.js'
import { AUTHORITY_SEED, createRow, DAY, DAYS, SERVICE_TOKEN, T0, TENANT_TOKEN } from './corpus.js'
import { createClient, describeQueryTargets, measureQueryLatency, metQueryTargets, waitForLine } from './latency.js'

export { postgresSkipReason } from '@gate/trust/testing'

const TARGET_INGEST_PER_SECOND = 10_000
const INGEST_BATCH = 500
const INGEST_IN_FLIGHT = 4

/** Options of `runPostgres`: those of the SQLite run. */
export interface PostgresBenchOptions {
  rows: number
  ingestRows: number
  rounds: number
}

export async function runPostgres(options: PostgresBenchOptions): Promise<{ ok: boolean }> {
  const { rows, ingestRows, rounds } = options
  const server = await startPostgres({ own: true })
  const dir = mkdtempSync(join(tmpdir(), 'gate-trust-bench-pg-'))
  try {
    const url = await server.createDatabase('gate_bench')
    const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey
    const generatedMs = await generateCorpus(url, rows, derivePublicKey)
    writeFileSync(join(dir, 'service-token'), SERVICE_TOKEN, { mode: 0o600 })
    writeFileSync(join(dir, 'tenant-token'), TENANT_TOKEN, { mode: 0o600 })
    writeFileSync(join(dir, 'authority-seed'), AUTHORITY_SEED.toString('hex'), { mode: 0o600 })
    const gate = await spawnGate(
      ['trust', 'serve', '--listen', '127.0.0.1:0', '--authority-seed-file', join(dir, 'authority-seed'), '--service-token-file', join(dir, 'service-token'), '--tenant-token', `tenant-3=${join(dir, 'tenant-token')}`, '--no-transparency-log'],
      // the URL (with its password) through the environment, off argv
      { env: { GATE_CONTROL_TOKEN: '', GATE_DATABASE_URL: url }, readyTimeoutMs: 600_000 },
    )
    try {
      const warmMs = await waitForLine(gate, /analytics rollup ready .*\((\d+) ms\)/)
      process.stderr.write(`PostgreSQL: analytics rollup warmed in ${warmMs} ms\n`)
      const client = createClient(gate.url)
      const latency = await measureQueryLatency(client, rows)
      printTable(`PostgreSQL ${await serverVersion(url, derivePublicKey)}: trust-control query latency over ${rows.toLocaleString('en-US')} receipts (generated in ${Math.round(generatedMs / 1000)} s), real gate trust serve --database-url`, latency.results)

      const store = await measureStoreAppends(url, derivePublicKey, ingestRows, rounds)
      const route = await measureRouteIngest(gate.url, ingestRows, rounds)
      printTable(`PostgreSQL: receipt ingest (${ingestRows.toLocaleString('en-US')} receipts per round, median of ${rounds})`, [
        { path: 'store: PgReceiptLog appends, group commit at concurrency 50', 'receipts/s': median(store), rounds: store.map(r => Math.round(r)).join(', ') },
        { path: `route: POST /v1/receipts/ingest, ${INGEST_BATCH} per batch, ${INGEST_IN_FLIGHT} in flight, signatures verified`, 'receipts/s': median(route), rounds: route.map(r => Math.round(r)).join(', ') },
      ])
      const ingestMet = median(route) >= TARGET_INGEST_PER_SECOND
      process.stdout.write(`PostgreSQL targets: ${describeQueryTargets(latency)}; ingest through the route >= ${TARGET_INGEST_PER_SECOND.toLocaleString('en-US')}/s (${Math.round(median(route))}/s): ${ingestMet ? 'met' : 'MISSED'}\n`)
      return { ok: metQueryTargets(latency) && ingestMet }
    } finally {
      await gate.stop('SIGTERM')
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await server.destroy()
  }
}

/** Fills a fresh database with `rows` receipts of the bench corpus, then VACUUM ANALYZE; ms taken. */
export async function generateCorpus(url: string, rows: number, derivePublicKey: (seed: Uint8Array) => string): Promise<number> {
  process.stderr.write(`PostgreSQL: generating ${rows.toLocaleString('en-US')} receipts\n`)
  const started = performance.now()
  const stores = await openPgStores({ url, derivePublicKey, maxBatchSize: 2048 })
  try {
    for (let base = 0; base < rows; base += 2048) {
      const batch = []
      for (let n = base; n < Math.min(rows, base + 2048); n++) batch.push(createRow(n, T0 + Math.floor((n * DAYS * DAY) / rows)))
      await stores.receipts.log.appendMany(batch)
      if (base % 100_000 === 0 && base > 0) process.stderr.write(`  ${base.toLocaleString('en-US')}\n`)
    }
    // every table: the receipts' partitions, the id table and (from migration 4) the rollups
    await stores.db.run('VACUUM ANALYZE')
  } finally {
    await stores.close()
  }
  return performance.now() - started
}

async function serverVersion(url: string, derivePublicKey: (seed: Uint8Array) => string): Promise<string> {
  const stores = await openPgStores({ url, derivePublicKey })
  try {
    const version = (await stores.db.get<{ v: string }>("SELECT current_setting('server_version') AS v"))?.v ?? '?'
    return `${version} (Gate schema version ${stores.migrations.version})`
  } finally {
    await stores.close()
  }
}

// Appends at concurrency 50 through a store of this process (the receipts land after the corpus).
async function measureStoreAppends(url: string, derivePublicKey: (seed: Uint8Array) => string, count: number, rounds: number): Promise<number[]> {
  const stores: PgStores = await openPgStores({ url, derivePublicKey })
  const rates: number[] = []
  try {
    let next = 10_000_000
    for (let round = 0; round < rounds; round++) {
      let issued = 0
      const first = next
      const started = performance.now()
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (issued < count) {
            const n = first + issued++
            await stores.receipts.log.append(createRow(n, T0 + DAYS * DAY + Math.floor(n / 1000)))
          }
        }),
      )
      rates.push((count * 1000) / (performance.now() - started))
      next += count
    }
  } finally {
    await stores.close()
  }
  return rates
}

// A sidecar's shipping: its key enrolled once, then batches of receipts it signed. Signing is done before
// the clock starts (it is the sidecar's cost, not trust-control's).
async function measureRouteIngest(base: string, count: number, rounds: number): Promise<number[]> {
  const sidecar = createSigner({ secret: generateSecret('ed25519') })
  await post(base, '/v1/keys/enroll', { publicKey: sidecar.publicKey, label: 'bench-sidecar' })
  const rates: number[] = []
  for (let round = 0; round < rounds; round++) {
    const batches: string[] = []
    for (let b = 0; b < count; b += INGEST_BATCH) {
      const receipts = []
      for (let n = b; n < Math.min(count, b + INGEST_BATCH); n++) receipts.push({ receipt: JSON.parse(signHttpReceiptJson(shippedBody(round, n), sidecar).json), tenant: `tenant-${n % 20}`, subjectKey: null })
      batches.push(JSON.stringify({ receipts }))
    }
    let nextBatch = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: INGEST_IN_FLIGHT }, async () => {
        while (nextBatch < batches.length) await post(base, '/v1/receipts/ingest', batches[nextBatch++]!)
      }),
    )
    rates.push((count * 1000) / (performance.now() - started))
  }
  return rates
}

async function post(base: string, path: string, body: unknown): Promise<void> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SERVICE_TOKEN}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`)
}

function shippedBody(round: number, n: number): HttpReceiptBody {
  return receiptBody(n, { request_id: `shipped-${round}-${n}`, timestamp: T0 + DAYS * DAY + round * 1000 + Math.floor(n / 100), capability_id: `cap-${n % 1000}` })
}
