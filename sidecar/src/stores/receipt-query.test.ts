// Reads of the receipt store on real files (GATE_STORE_DRIVER picks the driver): point loads in every
// id bucket, cursor pages, and every access path of trust-control's queries (bucket seeks, covering
// index, cost index, seq walk), which must answer exactly what a filter over all rows answers.
import t from 'tap'
import { join } from 'node:path'
import type { CorpusFilter, ReceiptRow, StoredReceipt } from '@gate/trust'
import { ID_BUCKET_ROWS, RECEIPT_CORE_PENDING_INDEX } from './receipt-store.js'
import { openDatabase } from './sqlite-driver.js'
import { openTestReceiptStore, receiptRow, STORE_DRIVER } from '../testing/receipt-rows.js'

const driver = STORE_DRIVER

// a row with a small HTTP JSON, unless given
function row(overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  return receiptRow(0, { timestamp: 1_700_000_000, method: 'POST', routePattern: '/pets/{id}', toolName: 'POST /pets/{id}', httpJson: '{"verdict":{"verdict":"allow"}}', ...overrides })
}

const open = openTestReceiptStore

t.test('listAfter pages by seq and iterate walks every receipt after a cursor', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  await store.log.appendMany(Array.from({ length: 25 }, () => row()))
  t.same((await store.query.listAfter(0, 10)).map(r => r.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  t.same((await store.query.listAfter(20, 10)).map(r => r.seq), [21, 22, 23, 24, 25])
  t.same(await store.query.listAfter(25, 10), [])
  const seqs: number[] = []
  for await (const r of store.query.iterate(5, 7)) seqs.push(r.seq)
  t.same(seqs, Array.from({ length: 20 }, (_, i) => i + 6))
  await t.rejects(store.query.listAfter(-1, 10), { code: 'gate_bad_request' })
  await t.rejects(store.query.listAfter(0, 0), { code: 'gate_bad_request' })
})

t.test('ingestBatchAfter writes the ingest body: stored bytes unchanged, the row columns beside them', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const http = JSON.stringify({ id: 'h', note: 'é \u2028 "quoted" \\ ' })
  const core = '{"id":"c","tool_name":"read_file","n":12345678901234567890}'
  await store.log.appendMany([
    row({ httpJson: http, tenant: 'acme "inc" ü\n', subjectKey: 'ab'.repeat(32), costUnits: 42, costCurrency: 'EUR', attemptedCostUnits: 50 }),
    row({ httpJson: null, coreJson: core, requestId: 'mcp-call-7', method: 'tools/call', toolServer: 'fs', toolName: 'read_file' }),
    row({ kind: 'final', decisionReceiptId: 'd'.repeat(64) }),
  ])
  const batch = await store.query.ingestBatchAfter(0, 10)
  t.match(batch, { count: 3, lastSeq: 3 })
  const text = batch!.body.toString('utf8')
  t.ok(text.includes(`{"receipt":${http},`) && text.includes(`{"coreReceipt":${core},`), 'each signed form exactly as stored')
  const body = JSON.parse(text) as { receipts: Record<string, unknown>[] }
  t.same(body.receipts.map(({ receipt: _r, coreReceipt: _c, ...columns }) => columns), [
    { tenant: 'acme "inc" ü\n', subjectKey: 'ab'.repeat(32), costUnits: 42, costCurrency: 'EUR', attemptedCostUnits: 50, kind: 'decision', decisionReceiptId: null },
    { requestId: 'mcp-call-7', tenant: null, subjectKey: null, costUnits: null, costCurrency: null, attemptedCostUnits: null, kind: 'decision', decisionReceiptId: null },
    { tenant: null, subjectKey: null, costUnits: null, costCurrency: null, attemptedCostUnits: null, kind: 'final', decisionReceiptId: 'd'.repeat(64) },
  ])
  t.match(await store.query.ingestBatchAfter(1, 1), { count: 1, lastSeq: 2 }, 'at most limit receipts, after the cursor')
  t.equal(await store.query.ingestBatchAfter(3, 10), undefined, 'nothing after the last')
  await t.rejects(store.query.ingestBatchAfter(-1, 10), { code: 'gate_bad_request' })
  await t.rejects(store.query.ingestBatchAfter(0, 0), { code: 'gate_bad_request' })
})

t.test('lookups by id find receipts in every id bucket', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const rows = Array.from({ length: ID_BUCKET_ROWS + 300 }, () => row({ httpJson: '{}' }))
  for (let i = 0; i < rows.length; i += 2000) await store.log.appendMany(rows.slice(i, i + 2000))
  for (const index of [0, 1, ID_BUCKET_ROWS - 2, ID_BUCKET_ROWS - 1, ID_BUCKET_ROWS, rows.length - 1]) {
    t.equal((await store.query.getById(rows[index]!.receiptId))?.seq, index + 1, `row ${index + 1}`)
  }
})

// ---- trust-control reads: every access path (bucket seeks, covering index, cost index, seq walk)
// answers exactly what a filter over all rows answers, with the trust indexes and without any.

function queryRows(count: number, offset = 0): ReceiptRow[] {
  return Array.from({ length: count }, (_, k) => {
    const n = k + offset
    const costed = n % 4 === 0
    return row({
      timestamp: 1_700_000_000 + ((n * 7919) % 50_000),
      toolName: ['GET /a', 'POST /b', 'DELETE /c/{id}'][n % 3]!,
      outcome: (['allow', 'allow', 'deny', 'cancelled', 'incomplete'] as const)[n % 5]!,
      capabilityId: n % 11 === 0 ? null : `cap-${n % 23}`,
      tenant: n % 7 === 0 ? null : `tenant-${n % 4}`,
      subjectKey: n % 11 === 0 || n % 6 === 0 ? null : `${n % 5}`.repeat(64),
      costUnits: costed ? (n * 37) % 1000 : null,
      costCurrency: costed ? (n % 8 === 0 ? 'USD' : 'EUR') : null,
      attemptedCostUnits: costed ? n % 13 : null,
      coreJson: n % 3 === 0 ? '{}' : null,
    })
  })
}

function matches(r: StoredReceipt, f: CorpusFilter): boolean {
  if (f.capabilityId !== undefined && r.capabilityId !== f.capabilityId) return false
  if (f.toolServer !== undefined && r.toolServer !== f.toolServer) return false
  if (f.toolName !== undefined && r.toolName !== f.toolName) return false
  if (f.outcome !== undefined && r.outcome !== f.outcome) return false
  if (f.tenant !== undefined && r.tenant !== f.tenant) return false
  if (f.since !== undefined && r.timestamp < f.since) return false
  if (f.until !== undefined && r.timestamp > f.until) return false
  if ((f.costCurrency !== undefined || f.minCost !== undefined || f.maxCost !== undefined || f.withCost === true) && r.costUnits === null) return false
  if (f.costCurrency !== undefined && r.costCurrency !== f.costCurrency) return false
  if (f.minCost !== undefined && r.costUnits! < f.minCost) return false
  if (f.maxCost !== undefined && r.costUnits! > f.maxCost) return false
  if (f.withCapability === true && r.capabilityId === null) return false
  if (f.subject !== undefined && r.subjectKey !== f.subject.subjectKey && !(r.subjectKey === null && r.capabilityId !== null && f.subject.capabilityIds.includes(r.capabilityId))) return false
  if (f.afterSeq !== undefined && r.seq <= f.afterSeq) return false
  if (f.throughSeq !== undefined && r.seq > f.throughSeq) return false
  return true
}

function countBy<T>(items: readonly T[], key: (item: T) => number): [number, number][] {
  const counts = new Map<number, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return [...counts]
}

const QUERY_FILTERS: CorpusFilter[] = [
  {},
  { capabilityId: 'cap-3' },
  { capabilityId: 'cap-3', outcome: 'allow', tenant: 'tenant-1' },
  { tenant: 'tenant-2' },
  { tenant: 'tenant-2', toolName: 'POST /b' },
  { toolName: 'GET /a' },
  { toolServer: 'http', outcome: 'cancelled' },
  { since: 1_700_010_000, until: 1_700_020_000 },
  { since: 1_700_040_000, tenant: 'tenant-3' },
  { until: 1_700_000_500 },
  { since: 1_700_060_000 },
  { costCurrency: 'USD' },
  { costCurrency: 'EUR', minCost: 200, maxCost: 600 },
  { costCurrency: 'EUR', minCost: 200, tenant: 'tenant-0' },
  { withCost: true },
  { withCapability: true, outcome: 'deny' },
  { subject: { subjectKey: '1'.repeat(64), capabilityIds: [] } },
  { subject: { subjectKey: '2'.repeat(64), capabilityIds: ['cap-4', 'cap-9', 'cap-17'] } },
  { subject: { subjectKey: '2'.repeat(64), capabilityIds: ['cap-4'] }, tenant: 'tenant-1', since: 1_700_005_000 },
  { subject: { subjectKey: '3'.repeat(64), capabilityIds: ['cap-5'] }, capabilityId: 'cap-5' },
]

t.test('queryPage, countMatching and aggregate agree with a filter over every row, indexed or not', async t => {
  const dir = t.testdir()
  const indexed = await open(t, join(dir, 'indexed.db'))
  await indexed.createTrustIndexes()
  const plain = await open(t, join(dir, 'plain.db'))
  // three buckets' worth, in two appends: the second through another connection (another writer)
  const total = ID_BUCKET_ROWS * 2 + 500
  const first = queryRows(ID_BUCKET_ROWS + 100)
  const second = queryRows(total - first.length, first.length)
  await indexed.log.appendMany(first)
  await plain.log.appendMany(first)
  const other = await open(t, join(dir, 'indexed.db'))
  await other.log.appendMany(second.slice(0, 1000))
  await indexed.log.appendMany(second.slice(1000))
  await plain.log.appendMany(second)
  t.same(await indexed.query.indexNames(), ['receipts_by_capability_bucket', 'receipts_by_cost', 'receipts_by_id', 'receipts_by_subject_bucket', 'receipts_by_tenant_bucket', 'receipts_by_time_covering', 'receipts_core_pending'])
  const all: StoredReceipt[] = []
  for await (const r of indexed.query.iterate(0, 5000)) all.push(r)
  t.equal(all.length, total)
  const buckets = await openDatabase(join(dir, 'indexed.db'), { driver })
  const wrong = await buckets.get<{ n: number }>(`SELECT count(*) AS n FROM receipts WHERE id_bucket != seq / ${ID_BUCKET_ROWS}`)
  await buckets.close()
  t.equal(wrong?.n, 0, 'id_bucket is exact even with two writers')
  for (const filter of QUERY_FILTERS) {
    const expected = all.filter(r => matches(r, filter))
    for (const [name, store] of [['indexed', indexed], ['plain', plain]] as const) {
      const label = `${name} ${JSON.stringify(filter)}`
      t.equal(await store.query.countMatching(filter), expected.length, `${label}: count ${expected.length}`)
      const firstPage = await store.query.queryPage(filter, 40)
      t.same(firstPage.map(r => r.seq), expected.slice(0, 40).map(r => r.seq), `${label}: first page`)
      const cursor = expected[Math.floor(expected.length / 2)]?.seq ?? 0
      const through = all[Math.floor(total * 0.8)]!.seq
      const window = { ...filter, afterSeq: cursor, throughSeq: through }
      const windowed = expected.filter(r => r.seq > cursor && r.seq <= through)
      t.same((await store.query.queryPage(window, 25)).map(r => r.seq), windowed.slice(0, 25).map(r => r.seq), `${label}: page after a cursor, bounded`)
      t.equal(await store.query.countMatching(window), windowed.length, `${label}: bounded count`)
      t.same((await store.query.queryPage(filter, 7, 'desc')).map(r => r.seq), expected.slice(-7).reverse().map(r => r.seq), `${label}: newest first`)
      const [summary] = await store.query.aggregate(filter, 'none')
      t.equal(summary?.total ?? 0, expected.length, `${label}: aggregate total`)
      t.equal(summary?.charged ?? 0, expected.reduce((n, r) => n + (r.costUnits ?? 0), 0), `${label}: charged`)
      const tools = await store.query.aggregate(filter, 'tool')
      t.equal(tools.reduce((n, r) => n + r.total, 0), expected.length, `${label}: tool groups add up`)
      const times = await store.query.aggregate(filter, 'time', 3600)
      t.same(
        times.map(r => [r.bucketStart, r.total]).sort((a, b) => a[0]! - b[0]!),
        [...countBy(expected, r => r.timestamp - (r.timestamp % 3600))].sort((a, b) => a[0]! - b[0]!),
        `${label}: hour buckets`,
      )
    }
  }
  const subjects = await indexed.query.aggregate({}, 'subject')
  t.equal(subjects.find(r => r.subjectKey === null && r.capabilityId === 'cap-5')?.total, all.filter(r => r.subjectKey === null && r.capabilityId === 'cap-5').length, 'rows without a subject group by capability')
  const costs = await indexed.query.aggregate({}, 'cost')
  t.equal(costs.reduce((n, r) => n + r.total, 0), all.filter(r => r.costUnits !== null).length, 'cost groups hold the receipts with financial metadata')
  t.same(await indexed.query.queryPage({ since: 5, until: 4 }, 10), [], 'an empty window')
})

t.test('the core backlog lists rows without a core form, in seq order', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  await store.log.createIndexes([RECEIPT_CORE_PENDING_INDEX])
  await store.log.appendMany(queryRows(30))
  const pending = await store.query.listCorePending(0, 100)
  t.same(pending.map(r => r.seq), Array.from({ length: 30 }, (_, i) => i + 1).filter(seq => (seq - 1) % 3 !== 0))
  await store.log.setCoreJson(2, '{"core":true}')
  t.same((await store.query.listCorePending(0, 3)).map(r => r.seq), [3, 5, 6])
  t.same((await store.query.listCorePending(20, 100)).map(r => r.seq), [21, 23, 24, 26, 27, 29, 30])
})
