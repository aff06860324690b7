// Batches the receipt log COPYs (PgReceiptLogOptions.copyFromRows) store exactly what the unnest
// statement stores: rows holding what COPY's text format must escape (tabs, newlines, carriage
// returns, backslashes, `\N` and `\.` as data, quotes, non-ASCII), the same seqs, ids and rollups; a
// role that may not create temporary tables appends its large batches through unnest.
import t from 'tap'
import { createSigner } from '@gate/sdk'
import type { ReceiptRow } from '../stores/receipt-row.js'
import { postgresSkipReason, startPostgres, type PostgresServer } from '../testing/postgres-server.js'
import { receiptRow } from '../testing/receipt-rows.js'
import { openPgStores, PgDatabase, PgReceiptLog, type PgStores } from './index.js'
import { ROLLUPS } from './migrations/0004-partitioned-receipts.js'
import { copyField, copyLine } from './pg-copy.js'

const skip = postgresSkipReason()
let server!: PostgresServer
const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
})
t.teardown(() => server?.destroy())

const HOSTILE = [
  'tab\there',
  'line\nbreak',
  'carriage\rreturn\r\n',
  'back\\slash\\',
  '\\N',
  '\\.',
  '\\\\t literal',
  '\n\\.\n',
  `quotes ' " \` and {"json": "a\\"b"}`,
  'comma, semicolon; pipe | and , ,',
  'unicode: é ß Ж 中文 العربية 🦀👩‍👩‍👧 \u200b \u202e reversed \ufeff',
  ' leading and trailing spaces ',
]

// Every hostile text in every free-text column, one row per text, and a core-only final receipt.
function hostileRows(): ReceiptRow[] {
  const rows = HOSTILE.map((text, n) =>
    receiptRow(n, {
      requestId: `req ${text}`,
      method: text,
      routePattern: `/items/${text}`,
      toolServer: text,
      toolName: `GET ${text}`,
      capabilityId: `cap ${text}`,
      tenant: text,
      subjectKey: `key ${text}`,
      costUnits: n * 7,
      costCurrency: text,
      attemptedCostUnits: n,
      httpJson: JSON.stringify({ n, text, raw: text }),
    }),
  )
  const decision = rows[0]!.receiptId
  rows.push(receiptRow(HOSTILE.length, { kind: 'final', decisionReceiptId: decision, httpJson: null, coreJson: `{"core":"${HOSTILE.join('|').replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n').replaceAll('\t', '\\t').replaceAll('\r', '\\r')}"}` }))
  return rows
}

async function tables(stores: PgStores): Promise<Record<string, unknown[]>> {
  const dump: Record<string, unknown[]> = {}
  dump.receipts = await stores.db.all('SELECT * FROM receipts ORDER BY seq')
  dump.receipt_ids = await stores.db.all('SELECT * FROM receipt_ids ORDER BY seq')
  for (const { table, keys } of ROLLUPS) dump[table] = await stores.db.all(`SELECT * FROM ${table} ORDER BY ${keys.map((_, i) => i + 1).join(', ')}`)
  return dump
}

t.test('COPY text fields: null, the escaped delimiters, everything else as is', async t => {
  t.equal(copyField(null), '\\N')
  t.equal(copyField('\\N'), '\\\\N')
  t.equal(copyField('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e')
  t.equal(copyField(42), '42')
  t.equal(copyField('é 🦀 "\''), 'é 🦀 "\'')
  t.equal(copyLine([1, null, 'x\ty']), '1\t\\N\tx\\ty\n')
})

t.test('a COPYed batch with hostile text stores exactly what the unnest statement stores', { skip }, async t => {
  const rows = hostileRows()
  const dumps = []
  for (const [name, copyFromRows] of [
    ['copy', 1],
    ['unnest', Number.POSITIVE_INFINITY],
  ] as const) {
    const stores = await openPgStores({ url: await server.createDatabase(`gate_copy_${name}`), derivePublicKey, copyFromRows, poolSize: 2, connectTimeoutMs: 60_000 })
    t.teardown(() => stores.close())
    const results = await stores.receipts.log.appendMany(rows)
    t.same(
      results.map(r => r.seq),
      rows.map((_, i) => i + 1),
      `${name}: one batch, consecutive seqs`,
    )
    // the same ids again: found, not stored twice (through the staging table too)
    t.same(
      (await stores.receipts.log.appendMany(rows)).map(r => r.stored),
      rows.map(() => false),
    )
    dumps.push(await tables(stores))
  }
  const [copied, inserted] = dumps
  t.equal(copied!.receipts!.length, rows.length)
  t.same(copied, inserted)
  // exactly the text that was appended, column by column
  const byId = new Map((copied!.receipts as Record<string, unknown>[]).map(r => [r.receipt_id, r]))
  for (const row of rows) {
    const stored = byId.get(row.receiptId)!
    t.same(
      [stored.request_id, stored.method, stored.route_pattern, stored.tool_server, stored.tool_name, stored.capability_id, stored.tenant, stored.subject_key, stored.cost_currency, stored.http_json, stored.core_json],
      [row.requestId, row.method, row.routePattern, row.toolServer, row.toolName, row.capabilityId ?? null, row.tenant ?? null, row.subjectKey ?? null, row.costCurrency ?? null, row.httpJson, row.coreJson ?? null],
    )
  }
})

t.test('copyFromRows must be a positive integer or Infinity', async t => {
  // the constructor connects nowhere: a database that does not exist will do
  const db = new PgDatabase({ url: 'postgres://gate@127.0.0.1:1/none' })
  t.teardown(() => db.close())
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => new PgReceiptLog(db, { copyFromRows: bad }), { code: 'gate_invalid_config' })
  t.ok(new PgReceiptLog(db, { copyFromRows: Number.POSITIVE_INFINITY }))
})

t.test('a role without TEMPORARY on the database appends large batches through unnest', { skip }, async t => {
  const url = await server.createDatabase('gate_copy_notemp')
  const role = `gate_writer_${process.pid}`
  const owner = await openPgStores({ url, derivePublicKey, poolSize: 2 })
  // the owner migrates and makes the week's partition (creating one needs CREATE on the schema)
  await owner.receipts.log.append(receiptRow(0))
  await owner.db.run(`CREATE ROLE ${role} LOGIN PASSWORD 'writer-password-0123'`)
  await owner.db.run(`REVOKE TEMPORARY ON DATABASE "${new URL(url).pathname.slice(1)}" FROM PUBLIC`)
  await owner.db.run(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`)
  await owner.db.run(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`)
  await owner.close()
  const writer = new URL(url)
  writer.username = role
  writer.password = 'writer-password-0123'
  const stores = await openPgStores({ url: writer.toString(), derivePublicKey, poolSize: 2, copyFromRows: 1 })
  t.teardown(() => stores.close())
  await t.rejects(stores.db.run('CREATE TEMPORARY TABLE probe (x int)'), /permission denied/, 'the role really may not create temporary tables')
  const rows = Array.from({ length: 300 }, (_, i) => receiptRow(i + 1))
  t.same(
    (await stores.receipts.log.appendMany(rows)).map(r => r.seq),
    rows.map((_, i) => i + 2),
    'one batch of 300 stored, consecutive seqs after the owner’s row',
  )
  t.equal((await stores.db.get<{ n: number }>('SELECT count(*)::int AS n FROM receipt_rollup_time WHERE with_capability >= 0'))!.n > 0, true, 'the rollups were filled')
})
