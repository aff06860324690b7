// `npm run bench -- trust`: trust-control's storage on PostgreSQL at fleet scale (issue 41), without the
// SQLite half of `trust-query` (query.ts): a corpus of BENCH_TRUST_ROWS receipts (default 1,000,000)
// generated in a fresh PostgreSQL server, then the measurements of query-postgres.ts against the real
// `gate trust serve --database-url`: the selective and agent routes (goal p99 <= 20 ms), analytics and
// the operator report over a day and the whole corpus (goal <= 1 s), and ingest through
// POST /v1/receipts/ingest with every signature verified (goal >= 10,000 receipts/s).
//
//   BENCH_TRUST_ROWS=10000000 npm run bench -- trust
//
// The same run against the schema before migration 4 (migrations up to 3) is the same suite built from
// the commit before it (docs/performance.md names the commit and the command).
import { postgresSkipReason, runPostgres } from './query-postgres.js'

export async function run(): Promise<{ ok: boolean }> {
  const skip = postgresSkipReason()
  if (skip !== undefined) {
    process.stderr.write(`trust: PostgreSQL is needed (${skip})\n`)
    return { ok: false }
  }
  return runPostgres({
    rows: Number(process.env.BENCH_TRUST_ROWS ?? 1_000_000),
    ingestRows: Number(process.env.BENCH_INGEST_ROWS ?? 40_000),
    rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  })
}
