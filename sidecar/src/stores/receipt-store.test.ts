// The receipt store against real files, including a writer killed with SIGKILL mid-stream: every
// receipt whose append had resolved must be in the file afterwards.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { HttpReceipt } from '@gate/sdk'
import { ID_BUCKET_ROWS, createReceiptRow, openReceiptStore, type ReceiptQueryFilter, type ReceiptRow, type ReceiptStore, type StoredReceipt } from './receipt-store.js'
import { openDatabase } from './sqlite-driver.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

function receiptId(): string {
  return randomBytes(32).toString('hex')
}

function row(overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  const id = overrides.receiptId ?? receiptId()
  return {
    receiptId: id,
    timestamp: 1_700_000_000,
    requestId: `req-${id.slice(0, 8)}`,
    method: 'POST',
    routePattern: '/pets/{id}',
    toolServer: 'http',
    toolName: 'POST /pets/{id}',
    outcome: 'allow',
    kind: 'decision',
    httpJson: JSON.stringify({ id, verdict: { verdict: 'allow' } }),
    ...overrides,
  }
}

async function open(t: Test, path: string, options: Parameters<typeof openReceiptStore>[1] = {}): Promise<ReceiptStore> {
  const store = await openReceiptStore(path, { driver, ...options })
  t.teardown(() => store.close())
  return store
}

const signed: HttpReceipt = {
  id: 'a'.repeat(64),
  request_id: 'req-1',
  route_pattern: '/pets/{id}',
  method: 'DELETE',
  caller_identity_hash: 'b'.repeat(64),
  verdict: { verdict: 'cancel', reason: 'upstream gone' },
  receipt_kind: 'mediated_decision',
  boundary_class: 'prevent',
  tool_origin: 'caller_executed',
  redaction_mode: 'none',
  response_status: 500,
  timestamp: 1_700_000_123,
  content_hash: 'c'.repeat(64),
  policy_hash: 'd'.repeat(64),
  trust_level: 'mediated',
  capability_id: 'cap-1',
  metadata: null,
  kernel_key: 'e'.repeat(64),
  signature: 'f'.repeat(128),
}

t.test('createReceiptRow maps an HttpReceipt: tool server http, "{METHOD} {route}", cancel recorded as cancelled', async t => {
  const json = JSON.stringify(signed)
  const built = createReceiptRow(signed, json, { tenant: 't1', subjectKey: '9'.repeat(64) })
  t.match(built, {
    receiptId: signed.id,
    timestamp: 1_700_000_123,
    requestId: 'req-1',
    method: 'DELETE',
    routePattern: '/pets/{id}',
    toolServer: 'http',
    toolName: 'DELETE /pets/{id}',
    outcome: 'cancelled',
    capabilityId: 'cap-1',
    tenant: 't1',
    subjectKey: '9'.repeat(64),
    kind: 'decision',
    decisionReceiptId: null,
    httpJson: json,
  })
  const final = createReceiptRow({ ...signed, metadata: { gate_decision_receipt_id: '1'.repeat(64) } }, json)
  t.equal(final.kind, 'final')
  t.equal(final.decisionReceiptId, '1'.repeat(64))
  const cancelled = { ...signed, verdict: { verdict: 'cancel', reason: 'r' } } as typeof signed
  t.equal(createReceiptRow(cancelled, json).outcome, 'cancelled', 'cancel is recorded as cancelled')
})

t.test('an appended receipt is served byte for byte by id and by seq', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  t.equal(store.isEphemeral, false)
  // Odd spacing, key order and escapes: the store must not re-serialize.
  const httpJson = '{"z":1,  "id":"x","note":"caf\\u00e9 \u00e9 \u{1F600}", "a":[ ]}'
  const appended = row({ httpJson, capabilityId: 'cap-9', tenant: 'acme', costUnits: 250, costCurrency: 'USD', attemptedCostUnits: 0 })
  const { seq } = await store.append(appended)
  t.equal(seq, 1)
  const loaded = await store.getById(appended.receiptId)
  t.equal(loaded?.httpJson, httpJson)
  t.match(loaded, { seq: 1, capabilityId: 'cap-9', tenant: 'acme', costUnits: 250, costCurrency: 'USD', attemptedCostUnits: 0, subjectKey: null, coreJson: null })
  t.same(await store.getBySeq(1), loaded)
  t.equal(await store.getById(receiptId()), undefined, 'unknown id')
  t.equal(await store.getById('not-hex'), undefined, 'malformed id')
})

t.test('300 concurrent appends all commit with distinct seqs, batched by group commit', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const rows = Array.from({ length: 300 }, () => row())
  const results = await Promise.all(rows.map(r => store.append(r)))
  t.same(new Set(results.map(r => r.seq)).size, 300)
  t.equal(await store.count(), 300)
  t.equal(await store.latestSeq(), 300)
  t.ok(store.stats.batches < 300, `${store.stats.batches} transactions for 300 receipts`)
  for (const [i, r] of rows.entries()) {
    if (i % 37 === 0) t.equal((await store.getById(r.receiptId))?.seq, results[i]!.seq)
  }
})

t.test('listAfter pages by seq and iterate walks every receipt after a cursor', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  await store.appendMany(Array.from({ length: 25 }, () => row()))
  t.same((await store.listAfter(0, 10)).map(r => r.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  t.same((await store.listAfter(20, 10)).map(r => r.seq), [21, 22, 23, 24, 25])
  t.same(await store.listAfter(25, 10), [])
  const seqs: number[] = []
  for await (const r of store.iterate(5, 7)) seqs.push(r.seq)
  t.same(seqs, Array.from({ length: 20 }, (_, i) => i + 6))
  await t.rejects(store.listAfter(-1, 10), { code: 'gate_bad_request' })
  await t.rejects(store.listAfter(0, 0), { code: 'gate_bad_request' })
})

t.test('lookups by id find receipts in every id bucket', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const rows = Array.from({ length: ID_BUCKET_ROWS + 300 }, () => row({ httpJson: '{}' }))
  for (let i = 0; i < rows.length; i += 2000) await store.appendMany(rows.slice(i, i + 2000))
  for (const index of [0, 1, ID_BUCKET_ROWS - 2, ID_BUCKET_ROWS - 1, ID_BUCKET_ROWS, rows.length - 1]) {
    t.equal((await store.getById(rows[index]!.receiptId))?.seq, index + 1, `row ${index + 1}`)
  }
})

t.test('a malformed row is refused alone with gate_receipt_persistence_failed; its neighbours commit', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const good = [row(), row()]
  const settled = await Promise.allSettled([
    store.append(good[0]!),
    store.append(row({ receiptId: 'ABC' })),
    store.append(row({ outcome: 'cancel' as never })),
    store.append(row({ costUnits: -5 })),
    store.append(good[1]!),
  ])
  t.same(settled.map(s => s.status), ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled'])
  t.match((settled[1] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /receiptId must be 64 lowercase hex/ })
  t.match((settled[2] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /outcome/ })
  t.equal(store.healthy, true)
  t.equal(await store.count(), 2)
})

t.test('a commit that fails (file locked by another process) rejects its receipts and marks the store unhealthy until a commit succeeds', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const failures: Error[] = []
  const store = await open(t, path, { busyTimeoutMs: 0, onError: err => failures.push(err) })
  const other = await openDatabase(path, { driver, busyTimeoutMs: 0 })
  t.teardown(() => other.close())
  await other.exec('BEGIN IMMEDIATE')
  const settled = await Promise.allSettled([store.append(row()), store.append(row())])
  t.same(settled.map(s => s.status), ['rejected', 'rejected'])
  t.match((settled[0] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /locked|busy/i })
  t.equal(store.healthy, false)
  t.equal(store.lastError?.message.includes('could not be recorded'), true)
  t.equal(failures.length, 1)
  await other.exec('ROLLBACK')
  t.same(await store.append(row()), { seq: 1 }, 'the failed receipts took no seq')
  t.equal(store.healthy, true)
})

t.test('setCoreJson fills the core receipt form of a stored row', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const appended = row()
  const { seq } = await store.append(appended)
  t.equal(await store.setCoreJson(seq, '{"core":true}'), true)
  t.equal(await store.setCoreJson(seq + 100, '{}'), false)
  t.equal((await store.getById(appended.receiptId))?.coreJson, '{"core":true}')
})

t.test('receipts survive close and reopen; seq continues', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const first = await openReceiptStore(path, { driver })
  const kept = row()
  await first.append(kept)
  await first.close()
  await t.rejects(first.append(row()), { code: 'gate_receipt_persistence_failed' }, 'a closed store refuses appends')
  const second = await open(t, path)
  t.equal((await second.getById(kept.receiptId))?.httpJson, kept.httpJson)
  t.same(await second.append(row()), { seq: 2 })
})

t.test('an in-memory store is ephemeral and works the same', async t => {
  const store = await open(t, ':memory:')
  t.equal(store.isEphemeral, true)
  const r = row()
  await store.append(r)
  t.equal((await store.getById(r.receiptId))?.receiptId, r.receiptId)
})

t.test('query indexes are created only on request', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await open(t, path)
  const indexNames = async (): Promise<string[]> => {
    const db = await openDatabase(path, { driver })
    const names = (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")).map(r => r.name)
    await db.close()
    return names
  }
  t.same(await indexNames(), ['receipts_by_id'])
  await store.createQueryIndexes()
  await store.createQueryIndexes()
  t.same(await indexNames(), ['receipts_by_capability', 'receipts_by_id', 'receipts_by_subject', 'receipts_by_tenant', 'receipts_by_timestamp', 'receipts_by_tool'])
})

t.test('unknown options are refused at open', async t => {
  await t.rejects(openReceiptStore(':memory:', { batchSize: 10 } as never), { code: 'gate_invalid_config', message: /receipt store options\.batchSize/ })
  await t.rejects(openReceiptStore(':memory:', { queryIndexes: 'yes' } as never), { code: 'gate_invalid_config', message: /queryIndexes must be a boolean/ })
})

t.test('kill -9 mid-stream: every receipt whose append resolved is in the file', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const storeUrl = new URL('./receipt-store.js', import.meta.url).href
  // The child appends from 32 concurrent loops and prints "seq id" the moment each append resolves.
  // Writes to a pipe are synchronous on Linux, so a printed line is in the pipe before the next await.
  const script = `
    const { openReceiptStore } = await import(${JSON.stringify(storeUrl)})
    const { randomBytes } = await import('node:crypto')
    const store = await openReceiptStore(${JSON.stringify(path)}, { driver: ${JSON.stringify(driver)} })
    const pad = 'x'.repeat(1100)
    process.stdout.write('ready\\n')
    const loop = async () => {
      for (;;) {
        const id = randomBytes(32).toString('hex')
        const { seq } = await store.append({ receiptId: id, timestamp: 1700000000, requestId: 'r', method: 'POST',
          routePattern: '/p', toolServer: 'http', toolName: 'POST /p', outcome: 'allow', kind: 'decision',
          httpJson: JSON.stringify({ id, pad }) })
        process.stdout.write(seq + ' ' + id + '\\n')
      }
    }
    for (let i = 0; i < 32; i++) loop()
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const closed = new Promise<void>(resolve => child.on('close', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      // Kill once a good number of receipts were acknowledged, with appends still in flight.
      if (stdout.split('\n').length > 1502 && child.exitCode === null && !child.killed) {
        child.kill('SIGKILL')
        resolve()
      }
    })
    child.on('close', code => reject(new Error(`child exited with ${code} before the kill: ${stderr}`)))
  })
  await closed
  const acknowledged = stdout
    .split('\n')
    .slice(1, -1) // drop "ready" and the possibly partial last line
    .map(line => line.split(' '))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[1]!.length === 64)
  t.ok(acknowledged.length >= 1500, `${acknowledged.length} receipts acknowledged before the kill`)
  const store = await open(t, path)
  let missing = 0
  for (const [seq, id] of acknowledged) {
    const stored = await store.getById(id)
    if (stored?.seq !== Number(seq)) missing++
  }
  t.equal(missing, 0, 'no acknowledged receipt was lost')
  t.ok((await store.count()) >= acknowledged.length)
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

function matches(r: StoredReceipt, f: ReceiptQueryFilter): boolean {
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

const QUERY_FILTERS: ReceiptQueryFilter[] = [
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
  await indexed.appendMany(first)
  await plain.appendMany(first)
  const other = await open(t, join(dir, 'indexed.db'))
  await other.appendMany(second.slice(0, 1000))
  await indexed.appendMany(second.slice(1000))
  await plain.appendMany(second)
  t.same(await indexed.indexNames(), ['receipts_by_capability_bucket', 'receipts_by_cost', 'receipts_by_id', 'receipts_by_subject_bucket', 'receipts_by_tenant_bucket', 'receipts_by_time_covering', 'receipts_core_pending'])
  const all: StoredReceipt[] = []
  for await (const r of indexed.iterate(0, 5000)) all.push(r)
  t.equal(all.length, total)
  const buckets = await openDatabase(join(dir, 'indexed.db'), { driver })
  const wrong = await buckets.get<{ n: number }>(`SELECT count(*) AS n FROM receipts WHERE id_bucket != seq / ${ID_BUCKET_ROWS}`)
  await buckets.close()
  t.equal(wrong?.n, 0, 'id_bucket is exact even with two writers')
  for (const filter of QUERY_FILTERS) {
    const expected = all.filter(r => matches(r, filter))
    for (const [name, store] of [['indexed', indexed], ['plain', plain]] as const) {
      const label = `${name} ${JSON.stringify(filter)}`
      t.equal(await store.countMatching(filter), expected.length, `${label}: count ${expected.length}`)
      const firstPage = await store.queryPage(filter, 40)
      t.same(firstPage.map(r => r.seq), expected.slice(0, 40).map(r => r.seq), `${label}: first page`)
      const cursor = expected[Math.floor(expected.length / 2)]?.seq ?? 0
      const through = all[Math.floor(total * 0.8)]!.seq
      const window = { ...filter, afterSeq: cursor, throughSeq: through }
      const windowed = expected.filter(r => r.seq > cursor && r.seq <= through)
      t.same((await store.queryPage(window, 25)).map(r => r.seq), windowed.slice(0, 25).map(r => r.seq), `${label}: page after a cursor, bounded`)
      t.equal(await store.countMatching(window), windowed.length, `${label}: bounded count`)
      t.same((await store.queryPage(filter, 7, 'desc')).map(r => r.seq), expected.slice(-7).reverse().map(r => r.seq), `${label}: newest first`)
      const [summary] = await store.aggregate(filter, 'none')
      t.equal(summary?.total ?? 0, expected.length, `${label}: aggregate total`)
      t.equal(summary?.charged ?? 0, expected.reduce((n, r) => n + (r.costUnits ?? 0), 0), `${label}: charged`)
      const tools = await store.aggregate(filter, 'tool')
      t.equal(tools.reduce((n, r) => n + r.total, 0), expected.length, `${label}: tool groups add up`)
      const times = await store.aggregate(filter, 'time', 3600)
      t.same(
        times.map(r => [r.bucketStart, r.total]).sort((a, b) => a[0]! - b[0]!),
        [...countBy(expected, r => r.timestamp - (r.timestamp % 3600))].sort((a, b) => a[0]! - b[0]!),
        `${label}: hour buckets`,
      )
    }
  }
  const subjects = await indexed.aggregate({}, 'subject')
  t.equal(subjects.find(r => r.subjectKey === null && r.capabilityId === 'cap-5')?.total, all.filter(r => r.subjectKey === null && r.capabilityId === 'cap-5').length, 'rows without a subject group by capability')
  const costs = await indexed.aggregate({}, 'cost')
  t.equal(costs.reduce((n, r) => n + r.total, 0), all.filter(r => r.costUnits !== null).length, 'cost groups hold the receipts with financial metadata')
  t.same(await indexed.queryPage({ since: 5, until: 4 }, 10), [], 'an empty window')
})

t.test('the core backlog lists rows without a core form, in seq order', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  await store.createCorePendingIndex()
  await store.appendMany(queryRows(30))
  const pending = await store.listCorePending(0, 100)
  t.same(pending.map(r => r.seq), Array.from({ length: 30 }, (_, i) => i + 1).filter(seq => (seq - 1) % 3 !== 0))
  await store.setCoreJson(2, '{"core":true}')
  t.same((await store.listCorePending(0, 3)).map(r => r.seq), [3, 5, 6])
  t.same((await store.listCorePending(20, 100)).map(r => r.seq), [21, 23, 24, 26, 27, 29, 30])
})

t.test('tool and child receipts: append (idempotent, conflicting bytes refused) and list newest first', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  t.same(await store.appendListed({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1"}', tenant: 'a', toolName: 'read' }), { seq: 1, stored: true })
  t.same(await store.appendListed({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1"}' }), { seq: 1, stored: false })
  await t.rejects(store.appendListed({ kind: 'tool', receiptId: 'r1', json: '{"id":"r1","x":1}' }), { code: 'gate_conflict' })
  await store.appendListed({ kind: 'tool', receiptId: 'r2', json: '{"id":"r2"}', tenant: 'b' })
  await store.appendListed({ kind: 'child', receiptId: 'r1', json: '{"c":1}', sessionId: 's' })
  t.same((await store.listListed('tool', {}, 10)).map(r => r.receiptId), ['r1', 'r2'])
  t.same((await store.listListed('tool', { tenant: 'b' }, 10)).map(r => r.json), ['{"id":"r2"}'])
  t.same((await store.listListed('tool', {}, 1)).map(r => r.receiptId), ['r2'], 'the newest when limited')
  t.same((await store.listListed('child', { sessionId: 's', receiptId: 'r1' }, 10)).map(r => r.json), ['{"c":1}'])
})

t.test('watchAppends is told the last seq after each commit that appended', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const seen: number[] = []
  const stop = store.watchAppends(seq => seen.push(seq))
  await store.appendMany(queryRows(5))
  await store.setCoreJson(1, '{}')
  stop()
  await store.append(row())
  t.same(seen, [5])
})
