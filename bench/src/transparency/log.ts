// Issue #31 benchmark: the transparency log at scale. Over a corpus of real signed receipts (default
// 1,000,000; BENCH_TRANSPARENCY_ROWS), measures
//   - building the tree from scratch (what a store that predates the log pays once: each row another
//     process appended is verified before it becomes a leaf; the checkpointer's steady cost per receipt of
//     its own process is hashing plus ~2 stored nodes per leaf)
//   - inclusion proofs per second, by receipt id (the route's path: id lookup, ~log2(N) node reads, the
//     self-check) and by leaf index (tree reads only), with p50/p99 latency
//   - consistency proofs per second between random sizes and the full tree
//   - `gate receipt audit` over the whole store: tree only, and with every receipt's id and signature
// The checkpointing cost on the request path is in the sidecar suite (GET allow with and without the log).
// The corpus is kept in os.tmpdir() under a version-stamped name and reused; its tree tables are dropped
// before each build. BENCH_DURATION_SECS (default 5) bounds each proof loop.
//
//   npx tsc -b bench && node bench/dist/run.js transparency
import { randomInt } from 'node:crypto'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSigner, consistencyProof, inclusionProof, signHttpReceiptJson, sha256Hex, uuidv7, type HttpReceiptBody } from '@gate/sdk'
import { openDatabase, openReceiptStore, openTransparencyLogStore } from '../../../sidecar/dist/stores/index.js'
import { createReceiptRow, type ReceiptRow } from '@gate/trust'
import { Checkpointer } from '../../../sidecar/dist/transparency/checkpointer.js'
import { TransparencyLog } from '../../../sidecar/dist/transparency/transparency-log.js'
import { auditLog } from '../../../sidecar/dist/transparency/audit.js'
import { exampleReceiptBody } from '@gate/sdk/testing'
import { printTable, quantile } from '../measure.js'

/** Bump when the generated corpus changes shape, so stale files are not reused. */
const CORPUS_VERSION = 2
const ROWS = Number(process.env.BENCH_TRANSPARENCY_ROWS ?? 1_000_000)
const DURATION_SECS = Number(process.env.BENCH_DURATION_SECS ?? 5)
const signer = createSigner({ secret: new Uint8Array(32).fill(31) })

export async function run(): Promise<{ ok: boolean }> {
  const path = await ensureCorpus(ROWS)
  const db = await openDatabase(path)
  for (const table of ['transparency_state', 'transparency_nodes', 'transparency_checkpoints']) await db.exec(`DROP TABLE IF EXISTS ${table}`)
  await db.exec('VACUUM')
  await db.close()
  const results: Record<string, string | number>[] = []

  const receipts = await openReceiptStore(path)
  const backend = await openTransparencyLogStore(path)
  try {
    // every row is another process's to this checkpointer: each is verified before it becomes a leaf
    const checkpointer = new Checkpointer({ backend, signer: () => signer, acceptedSigners: async keys => new Set(keys.filter(k => k === signer.publicKey)), everyReceipts: 0, intervalMs: 0 })
    const started = performance.now()
    await checkpointer.createCheckpoint()
    const buildMs = performance.now() - started
    results.push({ measure: `tree build, ${ROWS.toLocaleString('en-US')} leaves`, 'per second': Math.round((ROWS * 1000) / buildMs), 'p50 ms': '', 'p99 ms': '', 'total s': (buildMs / 1000).toFixed(1) })

    const log = new TransparencyLog({ backend, checkpointer, findSeq: async id => (await receipts.query.getById(id))?.seq })
    const ids = await sampleIds(path, 2000)
    results.push(await loop('inclusion proof by receipt id', i => log.inclusionProof(ids[i % ids.length]!)))
    results.push(await loop('inclusion proof by leaf index', () => inclusionProof(randomInt(ROWS), ROWS, backend)))
    results.push(await loop('consistency proof, random size to full', () => consistencyProof(1 + randomInt(ROWS - 1), ROWS, backend)))

    for (const treeOnly of [true, false]) {
      const auditStarted = performance.now()
      const report = await auditLog({ backend, trustedKeys: [signer.publicKey], treeOnly })
      const ms = performance.now() - auditStarted
      if (!report.ok) throw new Error(`the audit of an untouched corpus failed: ${JSON.stringify(report.findings.slice(0, 3))}`)
      results.push({ measure: `audit of ${ROWS.toLocaleString('en-US')} receipts${treeOnly ? ', --tree-only' : ', ids and signatures'}`, 'per second': Math.round((ROWS * 1000) / ms), 'p50 ms': '', 'p99 ms': '', 'total s': (ms / 1000).toFixed(1) })
    }
    await checkpointer.stop()
  } finally {
    await backend.close()
    await receipts.close()
  }
  printTable(`transparency log over ${ROWS.toLocaleString('en-US')} receipts (issue #31)`, results)
  process.stdout.write('transparency: no pass/fail target (the request-path cost is the sidecar suite\'s "transparency log cost" line)\n')
  return { ok: true }
}

async function loop(measure: string, fn: (i: number) => Promise<unknown>): Promise<Record<string, string | number>> {
  const latencies: number[] = []
  const end = performance.now() + DURATION_SECS * 1000
  const started = performance.now()
  for (let i = 0; performance.now() < end; i++) {
    const t0 = performance.now()
    await fn(i)
    latencies.push(performance.now() - t0)
  }
  const seconds = (performance.now() - started) / 1000
  return { measure, 'per second': Math.round(latencies.length / seconds), 'p50 ms': quantile(latencies, 0.5).toFixed(3), 'p99 ms': quantile(latencies, 0.99).toFixed(3), 'total s': seconds.toFixed(1) }
}

async function sampleIds(path: string, count: number): Promise<string[]> {
  const db = await openDatabase(path)
  try {
    const seqs = Array.from({ length: count }, () => 1 + randomInt(ROWS))
    const rows = await db.all<{ receipt_id: string }>(`SELECT receipt_id FROM receipts WHERE seq IN (${seqs.join(',')})`)
    return rows.map(r => r.receipt_id)
  } finally {
    await db.close()
  }
}

// ---- the corpus: real signed receipts (the full audit verifies every signature) ----

async function ensureCorpus(rows: number): Promise<string> {
  const path = join(tmpdir(), `gate-transparency-bench-v${CORPUS_VERSION}-${rows}.db`)
  const stamp = `${path}.complete`
  if (existsSync(path) && existsSync(stamp)) return path
  for (const file of [path, `${path}-wal`, `${path}-shm`, stamp]) rmSync(file, { force: true })
  process.stderr.write(`generating ${rows.toLocaleString('en-US')} signed receipts into ${path} (kept for later runs)\n`)
  const store = await openReceiptStore(path)
  try {
    for (let base = 0; base < rows; base += 2048) {
      const batch: ReceiptRow[] = []
      for (let n = base; n < Math.min(rows, base + 2048); n++) {
        const { receipt, json } = signHttpReceiptJson(body(n), signer)
        batch.push(createReceiptRow(receipt, json))
      }
      await store.log.appendMany(batch)
      if (base % 100_000 === 0 && base > 0) process.stderr.write(`  ${base.toLocaleString('en-US')}\n`)
    }
  } finally {
    await store.close()
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
  return path
}

// a realistic receipt made unique per row (request id, timestamp, content hash)
function body(n: number): HttpReceiptBody {
  return exampleReceiptBody({ request_id: uuidv7(), timestamp: 1_760_000_000 + n, content_hash: sha256Hex(`content-${n}`) })
}
