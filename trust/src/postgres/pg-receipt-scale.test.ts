// Receipts at scale on a real PostgreSQL (migration 4): a v3 database holding receipts migrates with
// every row kept (ids, seqs, partitions, rollups backfilled); the rollups answer exactly what a scan of
// the same receipts answers, for windows with partial hours and for a snapshot bound below the newest
// receipt; pages by keyset (the agent's two halves, a time window, newest first) visit every match once.
import t, { type Test } from 'tap'
import { createSigner } from '@gate/sdk'
import type { CorpusFilter, CorpusGrouping } from '../ports.js'
import type { ReceiptRow } from '../stores/receipt-row.js'
import { postgresSkipReason, startPostgres, type PostgresServer } from '../testing/postgres-server.js'
import { receiptRow } from '../testing/receipt-rows.js'
import { ensurePartitionsAhead, migrate, openPgStores, PgDatabase, PG_MIGRATIONS, type PgStores } from './index.js'
import { corpusWhere, scanAggregate, scanCount } from './pg-corpus-sql.js'

const skip = postgresSkipReason()
let server!: PostgresServer
const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey
const HOUR = 3600
const T0 = 1_700_006_400 // a day boundary

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
})
t.teardown(() => server?.destroy())

async function open(t: Test, url: string): Promise<PgStores> {
  const stores = await openPgStores({ url, derivePublicKey, poolSize: 4, connectTimeoutMs: 60_000 })
  t.teardown(() => stores.close())
  return stores
}

let seed = 11
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!

// Rows over three days and a bit, out of timestamp order, with every grouped field varying.
function variedRow(n: number): ReceiptRow {
  const costed = random() < 0.3
  const subject = random() < 0.8 ? `${'a'.repeat(63)}${Math.floor(random() * 6)}` : null
  return receiptRow(n, {
    timestamp: random() < 0.9 ? T0 + n * 131 + Math.floor(random() * 60) : T0 + Math.floor(random() * 3 * 86400),
    outcome: pick(['allow', 'allow', 'deny', 'cancelled', 'incomplete'] as const),
    toolName: `GET /t${Math.floor(random() * 5)}`,
    subjectKey: subject,
    capabilityId: random() < 0.8 ? `cap-${Math.floor(random() * 9)}` : null,
    tenant: random() < 0.9 ? `tenant-${Math.floor(random() * 3)}` : null,
    costUnits: costed ? Math.floor(random() * 1000) : null,
    costCurrency: costed ? pick(['USD', 'EUR']) : null,
    attemptedCostUnits: costed && random() < 0.5 ? Math.floor(random() * 100) : null,
  })
}

// Aggregate rows in a canonical order, for comparing two answers.
function sorted(rows: readonly object[]): string[] {
  return rows.map(r => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1))))).sort()
}

t.test('migrations 4 and 5: a v3 database keeps every receipt, id and seq, in weekly partitions with rollups, and its keys', { skip }, async t => {
  const url = await server.createDatabase()
  const db = new PgDatabase({ url, poolSize: 2 })
  t.teardown(() => db.close())
  await migrate(db, PG_MIGRATIONS.filter(m => m.version <= 3))
  // 300 receipts as today's schema stores them: three weeks, plus one from 1990 (no partition: the default)
  const rows = Array.from({ length: 300 }, (_, i) => variedRow(i * 60))
  rows.push(receiptRow(9999, { timestamp: 631_152_000 }))
  for (const [i, row] of rows.entries()) {
    await db.run(
      `INSERT INTO receipts (seq, receipt_id, timestamp, request_id, tool_server, tool_name, outcome, capability_id, tenant, subject_key, cost_units, cost_currency, attempted_cost_units, kind, http_json)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [i + 1, row.receiptId, row.timestamp, row.requestId ?? null, row.toolServer, row.toolName, row.outcome, row.capabilityId ?? null, row.tenant ?? null, row.subjectKey ?? null, row.costUnits ?? null, row.costCurrency ?? null, row.attemptedCostUnits ?? null, row.kind, row.httpJson],
    )
  }
  // keys as today's schema stores them (migration 5 keys their rows by hash)
  const sidecarKey = 'a1'.repeat(32)
  const authorityKey = derivePublicKey(new Uint8Array(32).fill(7))
  await db.run("INSERT INTO enrolled_keys (public_key, label, enrolled_at) VALUES ($1, 'sidecar before', 1700000000)", [sidecarKey])
  await db.run('INSERT INTO authority_keys (generation, public_key, seed, created_at) VALUES (1, $1, $2, 1700000000)', [authorityKey, Buffer.alloc(32, 7)])
  const stores = await open(t, url)
  t.same(stores.migrations.applied, [4, 5], 'migrations 4 and 5 applied at open')
  t.same(await stores.enrolledKeys.get(sidecarKey), { publicKey: sidecarKey, label: 'sidecar before', enrolledAt: 1_700_000_000 }, 'an enrolled key is kept')
  t.match(await stores.enrolledKeys.enroll(sidecarKey, 'again'), { created: false }, 'and enrolling it again finds it')
  t.equal(stores.authority.current()?.publicKey, authorityKey, 'the authority key is kept')
  const { query, log } = stores.receipts
  t.equal(await query.count(), rows.length)
  t.equal(await query.latestSeq(), rows.length)
  for (const [i, row] of rows.entries()) {
    const byId = await query.getById(row.receiptId)
    const bySeq = await query.getBySeq(i + 1)
    if (byId?.seq !== i + 1 || bySeq?.receiptId !== row.receiptId || byId.httpJson !== row.httpJson) {
      t.fail(`row ${i + 1} not kept`)
      return
    }
  }
  t.pass('every row is found by its id and by its seq')
  const partitions = await db.all<{ name: string; n: number }>(
    `SELECT c.relname AS name, (SELECT count(*) FROM receipts r WHERE r.tableoid = c.oid) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'receipts'::regclass`,
  )
  t.equal(partitions.find(p => p.name === 'receipts_default')?.n, 1, 'the 1990 receipt lies in the default partition')
  t.ok(partitions.filter(p => p.name.startsWith('receipts_w') && p.n > 0).length >= 3, 'the others in weekly partitions')
  t.same(sorted(await query.aggregate({}, 'tool')), sorted(await scanAggregate(db, {}, 'tool')), 'the rollups were backfilled')
  t.same(sorted(await query.aggregate({}, 'cost')), sorted(await scanAggregate(db, {}, 'cost')))

  // ingest stays idempotent by receipt id across the migration; seqs continue
  t.same(await log.append(rows[17]!), { seq: 18, stored: false }, 'a stored id answers its seq')
  t.same(await log.append(variedRow(5000)), { seq: rows.length + 1, stored: true }, 'the next seq follows')
  await t.rejects(db.run("INSERT INTO receipt_ids (receipt_id, seq, timestamp) VALUES ('x', 5, 0)"), 'a seq is unique')
})

t.test('rollups answer exactly what a scan of the same receipts answers', { skip }, async t => {
  const url = await server.createDatabase()
  const stores = await open(t, url)
  const rows = Array.from({ length: 2000 }, (_, n) => variedRow(n))
  for (let i = 0; i < rows.length; i += 250) await stores.receipts.log.appendMany(rows.slice(i, i + 250))
  const { query } = stores.receipts
  const db = stores.db
  const latest = await query.latestSeq()
  const windows: CorpusFilter[] = [
    {},
    { since: T0 + 1234, until: T0 + 2 * 86400 + 777 }, // partial hours at both ends
    { since: T0 + 5 * HOUR, until: T0 + 29 * HOUR - 1 }, // whole hours only
    { since: T0 + 5 * HOUR + 10, until: T0 + 5 * HOUR + 2000 }, // inside one hour
    { since: T0 + 86400 + 17 },
    { until: T0 + 86400 + 17 },
    { since: T0 + 9 * HOUR + 1, until: T0 + 3 * 86400, throughSeq: latest - 321 }, // a snapshot below the newest
    { throughSeq: 1000 },
    { since: T0 + 3 * 86400, until: T0 + 2 * 86400 }, // empty
  ]
  const groupings: [CorpusGrouping, number][] = [
    ['none', 86400],
    ['time', HOUR],
    ['time', 86400],
    ['tool', 86400],
    ['subject', 86400],
    ['cost', 86400],
  ]
  for (const window of windows) {
    for (const [grouping, bucket] of groupings) {
      t.same(sorted(await query.aggregate(window, grouping, bucket)), sorted(await scanAggregate(db, window, grouping, bucket)), `${grouping} ${bucket} over ${JSON.stringify(window)}`)
    }
    const agent = { subject: { subjectKey: `${'a'.repeat(63)}2`, capabilityIds: ['cap-1', 'cap-4'] } }
    for (const extra of [{}, { withCapability: true }, { withCost: true }, agent, { ...agent, throughSeq: latest - 77 }]) {
      const filter = { ...window, ...extra }
      t.equal(await query.countMatching(filter), await scanCount(db, filter), `count of ${JSON.stringify(filter)}`)
    }
  }
})

t.test('keyset pages visit every match once, in seq order', { skip }, async t => {
  const url = await server.createDatabase()
  const stores = await open(t, url)
  const rows = Array.from({ length: 1200 }, (_, n) => variedRow(n))
  await stores.receipts.log.appendMany(rows)
  const { query } = stores.receipts
  const filters: CorpusFilter[] = [
    { subject: { subjectKey: `${'a'.repeat(63)}3`, capabilityIds: ['cap-2', 'cap-5'] } },
    { since: T0 + 10 * HOUR + 5, until: T0 + 30 * HOUR },
    { toolName: 'GET /t1', outcome: 'deny' },
    { costCurrency: 'USD', minCost: 100, maxCost: 800 },
    { tenant: 'tenant-1', since: T0 + 3600 },
  ]
  for (const filter of filters) {
    // the plain filter, as written, in one scan: what the split and bounded pages must add up to
    const w = corpusWhere(filter)
    const expected = await stores.db.all<{ seq: number }>(`SELECT seq FROM receipts ${w.sql} ORDER BY seq`, w.params)
    const all = await query.countMatching(filter)
    t.equal(expected.length, all, `count of ${JSON.stringify(filter)}`)
    let cursor = 0
    const seen: number[] = []
    for (;;) {
      const page = await query.queryPage({ ...filter, afterSeq: cursor, throughSeq: rows.length }, 37)
      seen.push(...page.map(r => r.seq))
      if (page.length < 37) break
      cursor = page[page.length - 1]!.seq
    }
    t.same(seen, expected.map(r => r.seq), `pages of ${JSON.stringify(filter)}`)
    t.ok(seen.every((s, i) => i === 0 || s > seen[i - 1]!), 'ascending')
    const newest = await query.queryPage(filter, 25, 'desc')
    t.same(newest.map(r => r.seq), expected.slice(-25).reverse().map(r => r.seq), 'newest first')
  }
})

t.test('a node whose role has data privileges only keeps appending: a new week goes to the default partition', { skip }, async t => {
  const url = await server.createDatabase()
  const owner = await open(t, url)
  // roles are the server's, not the database's: a name of this test's own
  const role = `gate_data_${url.slice(-12)}`
  await owner.db.run(`CREATE ROLE ${role} LOGIN PASSWORD 'data-only-password'`)
  await owner.db.run(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`)
  await owner.db.run(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`)
  const dataUrl = new URL(url)
  dataUrl.username = role
  dataUrl.password = 'data-only-password'
  const lines: string[] = []
  const node = await openPgStores({ url: dataUrl.href, derivePublicKey, poolSize: 2, connectTimeoutMs: 60_000, log: line => lines.push(line) })
  t.teardown(() => node.close())
  // three weeks ahead: no partition yet (migration 4 made this week's and the next), and this role may not make one
  const ahead = Math.floor(Date.now() / 1000) + 3 * 604_800
  t.same(await node.receipts.log.append(receiptRow(1, { timestamp: ahead })), { seq: 1, stored: true }, 'the append commits')
  const where = await owner.db.get<{ name: string }>("SELECT tableoid::regclass::text AS name FROM receipts WHERE seq = 1")
  t.equal(where?.name, 'receipts_default', 'in the default partition')
  t.match(lines.join('\n'), /partition for week \d+ not created: this role may not create tables/, 'said in the log, with what to do')
  t.equal((await node.receipts.query.getBySeq(1))?.timestamp, ahead, 'and read back')
  // the owner's `gate trust migrate` makes the coming weeks; the one the default partition holds rows of stays there
  const through = await ensurePartitionsAhead(owner.db)
  t.ok(through > ahead, 'partitions made ahead, past the stored week')
  t.same(await node.receipts.log.append(receiptRow(2, { timestamp: ahead + 60 })), { seq: 2, stored: true })
})
