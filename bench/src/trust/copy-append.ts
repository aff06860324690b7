// `npm run bench -- trust-copy`: PgReceiptLog's two ways of appending a batch, in the same run on the
// same database: one INSERT over unnest() of an array parameter per column, or COPY into a temporary
// staging table and one INSERT from it (both statements also fill receipt_ids and the rollups). The
// database first holds BENCH_TRUST_ROWS receipts of the bench corpus (default 200,000), so the indexes
// are those of a store in use; then, for each batch size the log sees, BENCH_INGEST_ROWS receipts
// (default 10,000) are appended one batch per transaction (BENCH_BATCH_SIZES, default 50,250,500), the two ways alternating, BENCH_ROUNDS times.
// The result picks PgReceiptLog's `copyFromRows` (docs/postgres.md, "Receipts at scale").
import { loadavg } from 'node:os'
import { createSigner } from '@gate/sdk'
import { openPgStores } from '@gate/trust/postgres'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { median, printTable } from '../measure.js'
import { generateCorpus } from './query-postgres.js'
import { createRow, DAY, DAYS, T0 } from './corpus.js'

const MODES = { unnest: Number.POSITIVE_INFINITY, copy: 1 } as const
const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey

export async function run(): Promise<{ ok: boolean }> {
  const skip = postgresSkipReason()
  if (skip !== undefined) {
    process.stderr.write(`trust-copy: PostgreSQL is needed (${skip})\n`)
    return { ok: false }
  }
  const rows = Number(process.env.BENCH_TRUST_ROWS ?? 200_000)
  const count = Number(process.env.BENCH_INGEST_ROWS ?? 10_000)
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
  const BATCH_SIZES = (process.env.BENCH_BATCH_SIZES ?? '50,250,500').split(',').map(Number)
  const server = await startPostgres({ own: true })
  try {
    const url = await server.createDatabase('gate_copy_bench')
    await generateCorpus(url, rows, derivePublicKey)
    process.stderr.write(`load average before the appends: ${loadavg().map(l => l.toFixed(2)).join(' ')}\n`)
    const rates = new Map<string, number[]>()
    let next = rows
    for (let round = 0; round < rounds; round++) {
      for (const batch of BATCH_SIZES) {
        // alternate which way goes first, so neither always follows the other's dirty pages
        const order = round % 2 === 0 ? (['unnest', 'copy'] as const) : (['copy', 'unnest'] as const)
        for (const mode of order) {
          const rate = await appendRate(url, batch, MODES[mode], next, count)
          next += count
          rates.set(`${mode} ${batch}`, [...(rates.get(`${mode} ${batch}`) ?? []), rate])
        }
      }
    }
    process.stderr.write(`load average after the appends: ${loadavg().map(l => l.toFixed(2)).join(' ')}\n`)
    printTable(
      `PostgreSQL: PgReceiptLog batch appends over ${rows.toLocaleString('en-US')} stored receipts (${count.toLocaleString('en-US')} per round, median of ${rounds}, one batch per transaction)`,
      BATCH_SIZES.map(batch => {
        const unnest = rates.get(`unnest ${batch}`)!
        const copy = rates.get(`copy ${batch}`)!
        return {
          batch,
          'unnest receipts/s': Math.round(median(unnest)),
          'COPY receipts/s': Math.round(median(copy)),
          'COPY / unnest': (median(copy) / median(unnest)).toFixed(2),
          rounds: `unnest ${unnest.map(Math.round).join(', ')}; COPY ${copy.map(Math.round).join(', ')}`,
        }
      }),
    )
    return { ok: true }
  } finally {
    await server.destroy()
  }
}

// Receipts per second of `count` appends, `batch` per transaction; the rows land in the corpus's last
// day, a partition already holding rows, as a node's live writes would.
async function appendRate(url: string, batch: number, copyFromRows: number, first: number, count: number): Promise<number> {
  const stores = await openPgStores({ url, derivePublicKey, maxBatchSize: batch, copyFromRows })
  try {
    const pending = []
    for (let n = first; n < first + count; n += batch) {
      const rows = []
      for (let k = n; k < Math.min(first + count, n + batch); k++) rows.push(createRow(k, T0 + (DAYS - 1) * DAY + (k % DAY)))
      pending.push(rows)
    }
    const started = performance.now()
    for (const rows of pending) await stores.receipts.log.appendMany(rows)
    return count / ((performance.now() - started) / 1000)
  } finally {
    await stores.close()
  }
}
