// What only the PostgreSQL stores do, against a real server: migrations (concurrent starts, refusals),
// the receipt log's consecutive commit-ordered seqs across several pools (several nodes), idempotent
// appends, budget captures that never pass a maximum across nodes, revocation versions, authority
// rotation under its lock, and filters whose values are hostile SQL (everything is a bound parameter).
// The contracts shared with the SQLite stores run in pg-store-contracts.test.ts.
import t, { type Test } from 'tap'
import { createSigner, generateSecret } from '@gate/sdk'
import { postgresSkipReason, startPostgres, type PostgresServer } from '../testing/postgres-server.js'
import { receiptRow } from '../testing/receipt-rows.js'
import { migrate, openPgStores, PgDatabase, PG_MIGRATIONS, type PgStores } from './index.js'

const skip = postgresSkipReason()
let server!: PostgresServer

const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey

// Small pools, so that concurrent writes queue for connections; a loaded host may keep one waiting for
// seconds, which must not fail the test (in service, 5 s of waiting answers 503).
async function openNodes(t: Test, url: string, count: number): Promise<PgStores[]> {
  const nodes = await Promise.all(Array.from({ length: count }, () => openPgStores({ url, derivePublicKey, poolSize: 4, connectTimeoutMs: 60_000 })))
  t.teardown(() => Promise.all(nodes.map(n => n.close())))
  return nodes
}

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
})
t.teardown(() => server?.destroy())

t.test('migrations: concurrent starts apply each version once; a newer or edited schema is refused', { skip }, async t => {
  const url = await server.createDatabase()
  const dbs = Array.from({ length: 4 }, () => new PgDatabase({ url, poolSize: 2 }))
  t.teardown(() => Promise.all(dbs.map(db => db.close())))
  const results = await Promise.all(dbs.map(db => migrate(db)))
  t.same(results.map(r => r.applied.length).sort(), [0, 0, 0, PG_MIGRATIONS.length], 'one start migrated, the others found nothing to do')
  t.ok(results.every(r => r.version === PG_MIGRATIONS.length))
  const rows = await dbs[0]!.all<{ version: number }>('SELECT version FROM gate_schema_migrations ORDER BY version')
  t.same(rows.map(r => r.version), PG_MIGRATIONS.map(m => m.version))

  await dbs[0]!.run("INSERT INTO gate_schema_migrations (version, name, checksum) VALUES (999, 'from the future', 'x')")
  await t.rejects(migrate(dbs[1]!), /schema version 999 \(from the future\), newer than this binary knows/)
  await dbs[0]!.run('DELETE FROM gate_schema_migrations WHERE version = 999')
  await dbs[0]!.run("UPDATE gate_schema_migrations SET checksum = 'edited' WHERE version = 1")
  await t.rejects(migrate(dbs[1]!), /migration 1 \(trust-stores\) applied with other statements/)

  const foreign = await server.createDatabase()
  const other = new PgDatabase({ url: foreign })
  t.teardown(() => other.close())
  await other.run('CREATE TABLE receipts (id int)')
  await t.rejects(migrate(other), /tables receipts without gate_schema_migrations \(not a Gate database/)
})

t.test('an unreachable database fails at open with a 503-class error naming it, without its password', { skip }, async t => {
  const url = server.url('postgres').replace(`:${server.port}/`, ':1/')
  const err = await openPgStores({ url, derivePublicKey, connectTimeoutMs: 2000 }).then(() => undefined, (e: unknown) => e as Error & { code: string; status: number })
  t.match(err, { code: 'gate_store_unavailable', status: 503 })
  t.match(err?.message, /127\.0\.0\.1:1\/postgres/)
  t.notMatch(err?.message, new URL(url).password)
})

t.test('a lent connection whose server process ends between statements is discarded, and the process lives on', { skip }, async t => {
  const db = new PgDatabase({ url: await server.createDatabase() })
  t.teardown(() => db.close())
  const err = await db
    .withClient(async client => {
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
      const ended = new Promise(resolve => client.once('end', resolve))
      // the server ends this connection while it is lent out and idle: pg emits 'error' on it
      await db.run('SELECT pg_terminate_backend($1)', [pid])
      await ended
      await client.query('SELECT 1')
    })
    .then(() => undefined, (e: unknown) => e as Error & { code: string })
  t.match(err, { code: 'gate_store_unavailable' }, 'the statement after it fails as unavailable (503)')
  t.equal(await db.get<{ one: number }>('SELECT 1 AS one').then(r => r?.one), 1, 'the pool opens a fresh connection')
})

t.test('receipt appends from three nodes take consecutive seqs, visible in commit order; a stored id is stored once', { skip }, async t => {
  const nodes = await openNodes(t, await server.createDatabase(), 3)
  const per = 300
  const seen: number[][] = nodes.map(() => [])
  // a reader polling while writers run: whenever it sees seq M, every seq below M is there too
  let writing = true
  const reader = (async () => {
    let checks = 0
    while (writing || checks === 0) {
      const latest = await nodes[0]!.receipts.query.latestSeq()
      const count = await nodes[0]!.receipts.query.countMatching({ throughSeq: latest })
      t.equal(count, latest, `no gap below seq ${latest}`)
      checks++
    }
  })()
  await Promise.all(
    nodes.map(async (node, k) => {
      for (let i = 0; i < per; i += 25) {
        const results = await node.receipts.log.appendMany(Array.from({ length: 25 }, (_, j) => receiptRow(k * 10_000 + i + j)))
        seen[k]!.push(...results.map(r => r.seq))
      }
    }),
  )
  writing = false
  await reader
  const all = seen.flat().sort((a, b) => a - b)
  t.same(all, Array.from({ length: 3 * per }, (_, i) => i + 1), 'seqs 1..900, none twice, no gap')
  const row = receiptRow(1)
  const first = await nodes[1]!.receipts.log.append(row)
  const again = await nodes[2]!.receipts.log.append(row)
  t.same(again, { seq: first.seq, stored: false }, 'the same receipt id again answers the stored seq')
  t.equal(await nodes[0]!.receipts.query.count(), 3 * per + 1)
  t.ok(await nodes[0]!.receipts.log.setCoreJson(first.seq, '{"core":true}'))
  t.equal((await nodes[0]!.receipts.query.getById(row.receiptId))?.coreJson, '{"core":true}')
  const fresh = receiptRow(2).receiptId
  t.same([...(await nodes[1]!.receipts.query.findStored([fresh, row.receiptId, row.receiptId, 'not-hex']))], [[row.receiptId, first.seq]], 'findStored: the stored ids, with their seq')
})

t.test('budget captures across three nodes never pass the maximum', { skip }, async t => {
  const nodes = await openNodes(t, await server.createDatabase(), 3)
  const max = 40
  const plan = { invocations: [{ owner: 'cap-1', key: '0:GET /x', max, fixedMax: false, kind: 'grant' as const }, { owner: 'family:root', key: 'family', max: 1000, fixedMax: true, kind: 'family' as const }], costs: [{ owner: 'cap-1', key: '0:GET /x', units: 5, currency: 'USD', maxUnits: 150 }] }
  const results = await Promise.all(Array.from({ length: 120 }, (_, i) => nodes[i % 3]!.budgets.capture(plan)))
  const allowed = results.filter(r => r.allowed)
  // the cost cap (150 / 5 = 30) binds before the invocation maximum
  t.equal(allowed.length, 30, 'exactly as many captures as the tighter limit allows')
  t.ok(results.filter(r => !r.allowed).every(r => !r.allowed && r.failed.kind === 'cost'))
  const usage = await nodes[0]!.budgets.usage('cap-1')
  t.match(usage, { grants: [{ used: 30, maxInvocations: max }], costs: [{ units: 150, currency: 'USD' }] })
  const onlyCount = { invocations: [{ owner: 'cap-2', key: 'k', max: 25, fixedMax: false, kind: 'grant' as const }], costs: [] }
  const counted = await Promise.all(Array.from({ length: 90 }, (_, i) => nodes[i % 3]!.budgets.capture(onlyCount)))
  t.equal(counted.filter(r => r.allowed).length, 25)
  t.same(
    counted.flatMap(r => (r.allowed ? r.used : [])).sort((a, b) => a - b),
    Array.from({ length: 25 }, (_, i) => i + 1),
    'each count handed out once',
  )
  const mismatch = await nodes[1]!.budgets.capture({ invocations: [{ owner: 'family:root', key: 'family', max: 999, fixedMax: true, kind: 'family' }], costs: [] })
  t.match(mismatch, { allowed: false, failed: { kind: 'max_mismatch', recordedMax: 1000 } })
  const zero = await nodes[2]!.budgets.capture({ invocations: [{ owner: 'cap-3', key: 'k', max: 0, fixedMax: false, kind: 'grant' }], costs: [] })
  t.match(zero, { allowed: false, failed: { kind: 'invocation', used: 0 } })
  t.same(await nodes[0]!.budgets.usage('cap-3'), { capabilityId: 'cap-3', grants: [], costs: [] }, 'a refused capture leaves nothing behind')
})

t.test('revocations from several nodes take consecutive versions; revoking twice is idempotent', { skip }, async t => {
  const nodes = await openNodes(t, await server.createDatabase(), 3)
  const ids = Array.from({ length: 60 }, (_, i) => `cap-${i % 40}`)
  const results = await Promise.all(ids.map((id, i) => nodes[i % 3]!.revocations.revoke(id)))
  t.equal(results.filter(r => r.newlyRevoked).length, 40, 'each id newly revoked once')
  const stream = await nodes[1]!.revocations.listAfter(0, 1000)
  t.same(stream.map(r => r.seq), Array.from({ length: 40 }, (_, i) => i + 1))
  t.ok(await nodes[2]!.revocations.isRevoked('cap-7'))
  t.notOk(await nodes[2]!.revocations.isRevoked('cap-77'))
})

t.test('authority: one first key for concurrent starts; rotation wipes the seed and every node reloads', { skip }, async t => {
  const nodes = await openNodes(t, await server.createDatabase(), 3)
  const keys = await Promise.all(nodes.map(n => n.authority.ensureKey(() => generateSecret('ed25519'))))
  t.equal(new Set(keys.map(k => k.publicKey)).size, 1, 'every node uses the one key the first start created')
  const rotated = await nodes[0]!.authority.withAuthorityLock('exclusive', () => nodes[0]!.authority.rotate(generateSecret('ed25519')))
  t.equal(rotated.generation, 2)
  t.ok(await nodes[1]!.authority.refresh(), 'another node sees the new generation')
  t.same(nodes[1]!.authority.trustedPublicKeys(), [keys[0]!.publicKey, rotated.publicKey])
  t.notOk(await nodes[1]!.authority.refresh(), 'and nothing more afterwards')
  const seeds = await nodes[0]!.db.all<{ generation: number; seed: Buffer | null }>('SELECT generation, seed FROM authority_keys ORDER BY generation')
  t.equal(seeds[0]!.seed, null, 'the retired seed is wiped')
  await t.rejects(nodes[2]!.authority.rotate(keys[0]!.seed), /a key not used by an earlier generation/)
})

t.test('hostile filter values are data, never SQL', { skip }, async t => {
  const [node] = await openNodes(t, await server.createDatabase(), 1)
  const hostile = ["' OR 1=1 --", "x'); DROP TABLE receipts; --", '$1', '\\', '"', '%', "'; SELECT pg_sleep(10); --"]
  await node!.receipts.log.appendMany(hostile.map((h, i) => receiptRow(i, { capabilityId: h, tenant: h, toolName: h })))
  await node!.receipts.log.append(receiptRow(100))
  for (const [i, h] of hostile.entries()) {
    const filter = { capabilityId: h, toolName: h, tenant: h, subject: { subjectKey: h, capabilityIds: [h, "') OR ('1'='1"] } }
    t.equal(await node!.receipts.query.countMatching({ capabilityId: h }), 1, `capabilityId ${JSON.stringify(h)}`)
    const page = await node!.receipts.query.queryPage({ ...filter, subject: undefined }, 10)
    t.same(page.map(r => r.seq), [i + 1])
    t.same(await node!.receipts.query.countMatching(filter), 1)
    t.same((await node!.receipts.query.aggregate({ toolServer: h }, 'tool')).length, 0)
  }
  t.equal(await node!.receipts.query.count(), hostile.length + 1, 'the table is intact')
  await node!.capabilities.remember({ id: hostile[1]!, subject: hostile[0]!, issuer: 'i', issued_at: 1, expires_at: 2, scope: { grants: [] }, signature: 's' } as never)
  t.same(await node!.capabilities.idsForSubject(hostile[0]!), [hostile[1]])
  t.same([...(await node!.capabilities.subjectsOf([hostile[1]!, hostile[2]!])).entries()], [[hostile[1], hostile[0]]])
})
