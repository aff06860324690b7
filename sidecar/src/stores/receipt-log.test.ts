// The receipt log against real files (GATE_STORE_DRIVER picks the driver): appends commit before they
// resolve, one bad row fails alone, a writer killed with SIGKILL mid-stream loses no acknowledged
// receipt, and followers learn of every committed batch in commit order.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import type { CoreReceipt, HttpReceipt } from '@gate/sdk'
import { createCoreReceiptRow, createReceiptRow, TOOL_CALL_METHOD, type CommittedReceipts, type ReceiptRow } from '@gate/trust'
import { openReceiptStore } from './receipt-store.js'
import { STORE_APPLICATION_IDS } from './revision-stamp.js'
import { openDatabase } from './sqlite-driver.js'
import { openTestReceiptStore, receiptRow, STORE_DRIVER } from '../testing/receipt-rows.js'

const driver = STORE_DRIVER

// a row with a small HTTP JSON, unless given
function row(overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  return receiptRow(0, { timestamp: 1_700_000_000, method: 'POST', routePattern: '/pets/{id}', toolName: 'POST /pets/{id}', httpJson: '{"verdict":{"verdict":"allow"}}', ...overrides })
}

const open = openTestReceiptStore

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
  const { seq } = await store.log.append(appended)
  t.equal(seq, 1)
  const loaded = await store.query.getById(appended.receiptId)
  t.equal(loaded?.httpJson, httpJson)
  t.match(loaded, { seq: 1, capabilityId: 'cap-9', tenant: 'acme', costUnits: 250, costCurrency: 'USD', attemptedCostUnits: 0, subjectKey: null, coreJson: null })
  t.same(await store.query.getBySeq(1), loaded)
  t.equal(await store.query.getById(randomBytes(32).toString('hex')), undefined, 'unknown id')
  t.equal(await store.query.getById('not-hex'), undefined, 'malformed id')
})

t.test('300 concurrent appends all commit with distinct seqs, batched by group commit', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const rows = Array.from({ length: 300 }, () => row())
  const results = await Promise.all(rows.map(r => store.log.append(r)))
  t.same(new Set(results.map(r => r.seq)).size, 300)
  t.equal(await store.query.count(), 300)
  t.equal(await store.query.latestSeq(), 300)
  t.ok(store.log.stats.batches < 300, `${store.log.stats.batches} transactions for 300 receipts`)
  for (const [i, r] of rows.entries()) {
    if (i % 37 === 0) t.equal((await store.query.getById(r.receiptId))?.seq, results[i]!.seq)
  }
})

t.test('a malformed row is refused alone with gate_receipt_persistence_failed; its neighbours commit', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const good = [row(), row()]
  const settled = await Promise.allSettled([
    store.log.append(good[0]!),
    store.log.append(row({ receiptId: 'ABC' })),
    store.log.append(row({ outcome: 'cancel' as never })),
    store.log.append(row({ costUnits: -5 })),
    store.log.append(good[1]!),
  ])
  t.same(settled.map(s => s.status), ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled'])
  t.match((settled[1] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /receiptId must be 64 lowercase hex/ })
  t.match((settled[2] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /outcome/ })
  t.equal(store.log.healthy, true)
  t.equal(await store.query.count(), 2)
})

t.test('a commit that fails (file locked by another process) rejects its receipts and marks the store unhealthy until a commit succeeds', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const failures: Error[] = []
  const store = await open(t, path, { busyTimeoutMs: 0, onError: err => failures.push(err) })
  const other = await openDatabase(path, { driver, busyTimeoutMs: 0 })
  t.teardown(() => other.close())
  await other.exec('BEGIN IMMEDIATE')
  const settled = await Promise.allSettled([store.log.append(row()), store.log.append(row())])
  t.same(settled.map(s => s.status), ['rejected', 'rejected'])
  t.match((settled[0] as PromiseRejectedResult).reason, { code: 'gate_receipt_persistence_failed', message: /locked|busy/i })
  t.equal(store.log.healthy, false)
  t.equal(store.log.lastError?.message.includes('could not be recorded'), true)
  t.equal(failures.length, 1)
  await other.exec('ROLLBACK')
  t.same(await store.log.append(row()), { seq: 1 }, 'the failed receipts took no seq')
  t.equal(store.log.healthy, true)
})

t.test('setCoreJson fills the core receipt form of a stored row', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const appended = row()
  const { seq } = await store.log.append(appended)
  t.equal(await store.log.setCoreJson(seq, '{"core":true}'), true)
  t.equal(await store.log.setCoreJson(seq + 100, '{}'), false)
  t.equal((await store.query.getById(appended.receiptId))?.coreJson, '{"core":true}')
})

t.test('receipts survive close and reopen; seq continues', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const first = await openReceiptStore(path, { driver })
  const kept = row()
  await first.log.append(kept)
  await first.close()
  await t.rejects(first.log.append(row()), { code: 'gate_receipt_persistence_failed' }, 'a closed store refuses appends')
  const second = await open(t, path)
  t.equal((await second.query.getById(kept.receiptId))?.httpJson, kept.httpJson)
  t.same(await second.log.append(row()), { seq: 2 })
})

t.test('an in-memory store is ephemeral and works the same', async t => {
  const store = await open(t, ':memory:')
  t.equal(store.isEphemeral, true)
  const r = row()
  await store.log.append(r)
  t.equal((await store.query.getById(r.receiptId))?.receiptId, r.receiptId)
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
        const { seq } = await store.log.append({ receiptId: id, timestamp: 1700000000, requestId: 'r', method: 'POST',
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
    const stored = await store.query.getById(id)
    if (stored?.seq !== Number(seq)) missing++
  }
  t.equal(missing, 0, 'no acknowledged receipt was lost')
  t.ok((await store.query.count()) >= acknowledged.length)
})

t.test('followers learn of each committed batch after its commit, in commit order, with its ids and seq range', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const batches: CommittedReceipts[] = []
  const readBack: Promise<unknown>[] = []
  const stop = store.log.onCommitted(batch => {
    batches.push(batch)
    // read at once on the reader connection: the batch's last row must already be committed
    readBack.push(store.query.getBySeq(batch.lastSeq))
  })
  const throwing = store.log.onCommitted(() => {
    throw new Error('a follower that fails')
  })
  const first = Array.from({ length: 3 }, () => row())
  const second = Array.from({ length: 40 }, () => row())
  const [a, b] = await Promise.all([store.log.appendMany(first), store.log.appendMany(second)])
  await store.log.setCoreJson(1, '{}')
  const third = row()
  await store.log.append(third)
  stop()
  throwing()
  await store.log.append(row())
  const ids = [...first, ...second, third].map(r => r.receiptId)
  t.same(batches.flatMap(x => x.receiptIds), ids, 'every appended id once, in seq order; a core-form update is no batch')
  let seq = 1
  for (const batch of batches) {
    t.equal(batch.firstSeq, seq, 'batches follow each other without a gap')
    t.equal(batch.lastSeq - batch.firstSeq + 1, batch.receiptIds.length)
    seq = batch.lastSeq + 1
  }
  t.ok((await Promise.all(readBack)).every(found => found !== undefined), 'each batch was readable from another connection when its followers ran')
  t.same([...a, ...b].map(r => r.seq), Array.from({ length: 43 }, (_, i) => i + 1))
  t.equal(store.log.healthy, true, 'a follower that throws does not fail the commit')
})

t.test('a core-only receipt (a tool call) is stored without an HTTP form and read back byte for byte', async t => {
  const store = await open(t, join(t.testdir(), 'receipts.db'))
  const coreJson = '{"id":"x","tool_server":"fs"}'
  const appended = row({ method: TOOL_CALL_METHOD, routePattern: 'read_file', toolServer: 'fs', toolName: 'read_file', httpJson: null, coreJson })
  const { seq } = await store.log.append(appended)
  t.match(await store.query.getById(appended.receiptId), { seq, httpJson: null, coreJson, toolServer: 'fs', toolName: 'read_file', method: 'tools/call' })
  await t.rejects(store.log.append(row({ httpJson: null, coreJson: null })), { code: 'gate_receipt_persistence_failed', message: /coreJson must be a non-empty string/ }, 'a row keeps at least one signed form')
  await t.rejects(store.log.append(row({ httpJson: '' })), { code: 'gate_receipt_persistence_failed', message: /httpJson must be a non-empty string/ })
})

t.test('createCoreReceiptRow maps a core receipt: its own id, the tool columns, the decision as outcome', async t => {
  const receipt = { id: '1'.repeat(64), timestamp: 7, capability_id: '', tool_server: 'fs', tool_name: 'write_file', decision: { verdict: 'cancelled', reason: 'r' } } as unknown as CoreReceipt
  t.match(createCoreReceiptRow(receipt, '{}', { requestId: 'call-1', tenant: 'acme' }), {
    receiptId: '1'.repeat(64),
    timestamp: 7,
    requestId: 'call-1',
    method: 'tools/call',
    routePattern: 'write_file',
    toolServer: 'fs',
    toolName: 'write_file',
    outcome: 'cancelled',
    capabilityId: null,
    tenant: 'acme',
    kind: 'decision',
    httpJson: null,
    coreJson: '{}',
  })
  t.match(createCoreReceiptRow(receipt, '{}', { requestId: 'call-1', decisionReceiptId: '2'.repeat(64) }), { kind: 'final', decisionReceiptId: '2'.repeat(64) })
})

t.test('a revision 3 file migrates to revision 4: rows kept, http_json nullable, a core-only row fits', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const v3 = await openDatabase(path, { driver })
  await v3.exec(`PRAGMA application_id = ${STORE_APPLICATION_IDS.receipts}`)
  await v3.exec('PRAGMA user_version = 3')
  await v3.exec(`CREATE TABLE receipts (seq INTEGER PRIMARY KEY, receipt_id TEXT NOT NULL, id_bucket INTEGER NOT NULL, id_prefix INTEGER NOT NULL,
    timestamp INTEGER NOT NULL, request_id TEXT NOT NULL, method TEXT NOT NULL, route_pattern TEXT NOT NULL, tool_server TEXT NOT NULL,
    tool_name TEXT NOT NULL, outcome TEXT NOT NULL, capability_id TEXT, tenant TEXT, subject_key TEXT, cost_units INTEGER, cost_currency TEXT,
    attempted_cost_units INTEGER, kind TEXT NOT NULL, decision_receipt_id TEXT, http_json TEXT NOT NULL, core_json TEXT)`)
  await v3.exec('CREATE INDEX receipts_by_id ON receipts (id_bucket, id_prefix)')
  const old = row()
  await v3.run(
    `INSERT INTO receipts VALUES (1, ?, 0, ?, 1700000000, 'req-0', 'POST', '/pets/{id}', 'http', 'POST /pets/{id}', 'allow', NULL, 'acme', NULL, NULL, NULL, NULL, 'decision', NULL, ?, NULL)`,
    [old.receiptId, Number.parseInt(old.receiptId.slice(0, 13), 16), old.httpJson],
  )
  await v3.close()
  const store = await open(t, path)
  t.match(await store.query.getById(old.receiptId), { seq: 1, tenant: 'acme', httpJson: old.httpJson, coreJson: null }, 'the old row, found by id')
  const core = row({ httpJson: null, coreJson: '{"core":1}' })
  t.same(await store.log.append(core), { seq: 2 })
  const check = await openDatabase(path, { driver })
  t.teardown(() => check.close())
  t.equal((await check.get<{ user_version: number }>('PRAGMA user_version'))?.user_version, 4)
  t.ok(await check.get("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'receipts_by_id'"), 'the id index is back')
})
