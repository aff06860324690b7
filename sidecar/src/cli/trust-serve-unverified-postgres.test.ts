// The same rule on PostgreSQL (`gate trust serve --database-url`): nothing is signed over a stored
// receipt that does not verify, with the one check both backends share (@gate/trust's
// checkStoredReceipt). Receipts a real `gate sidecar` signed are copied into the database, one altered
// on the way: it is served as stored and reported, never signed, and the transparency log stops before
// it. A key rotation signs no core form over a receipt altered in the database. Skipped, with the
// reason, where no PostgreSQL can be found outside CI.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, verifyCoreReceipt } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { evaluateMany } from '../testing/evaluate-requests.js'
import { metricValue, parseMetrics } from '../testing/metrics-text.js'
import { postgresSkipReason, startPostgres, type PostgresServer } from '@gate/trust/testing'
import type { StoredReceipt } from '@gate/trust'
import { openReceiptStore } from '../stores/index.js'
import { openPgStores } from '@gate/trust/postgres'

const SERVICE_TOKEN = 'trust-service-token-0123456789abcdef'
const admin = { authorization: `Bearer ${SERVICE_TOKEN}` }
const skip = postgresSkipReason()
const derivePublicKey = (seed: Uint8Array) => createSigner({ secret: seed }).publicKey

let server: PostgresServer | undefined
t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
})
t.teardown(() => server?.destroy())

async function unverifiedCount(url: string, labels: Record<string, string>): Promise<number> {
  const res = await call(`${url}/metrics`, { headers: admin })
  return metricValue(parseMetrics(res.text), 'gate_receipts_unverified_total', labels)
}

t.test('on PostgreSQL a receipt altered in the database is served as stored, reported, and made no leaf', { skip: skip ?? false }, async t => {
  const files = await gateFiles(t)
  writeFileSync(join(files.dir, 'service-token'), SERVICE_TOKEN, { mode: 0o600 })
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed], { env: { GATE_CONTROL_TOKEN: 'sidecar-control-token-0123456789' } })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const receipts = await evaluateMany(sidecar.url, 4)
  t.equal(await sidecar.stop(), 0)

  // copied into the database, the second one with one byte changed
  const url = await server!.createDatabase('gate_unverified')
  const sqlite = await openReceiptStore(files.db)
  const rows: StoredReceipt[] = []
  for await (const row of sqlite.query.iterate()) rows.push(row)
  await sqlite.close()
  const victim = receipts[1]!
  const altered = rows.map(r => (r.receiptId === victim.id ? { ...r, httpJson: r.httpJson!.replace('safe method GET', 'safe method GEt') } : r))
  t.not(altered[1]!.httpJson, rows[1]!.httpJson)
  const pg = await openPgStores({ url, derivePublicKey })
  t.teardown(() => pg.close())
  await pg.receipts.log.appendMany(altered)

  const trust = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--authority-seed-file', files.seed, '--service-token-file', join(files.dir, 'service-token'), '--checkpoint-every', '0', '--checkpoint-interval-secs', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => trust.stop('SIGKILL'))
  const key = receipts[0]!.kernel_key
  const page = (await call(`${trust.url}/v1/receipts/query?limit=200`, { headers: admin })).body as { receipts: Record<string, unknown>[]; unverifiedReceipts?: { receiptId: string; failedStep: string }[] }
  t.equal(page.receipts.length, 4)
  const served = page.receipts.find(r => r.request_id === victim.request_id)
  t.ok(served, 'served in its HTTP form, as stored')
  t.match(JSON.stringify(served), /safe method GEt/)
  t.notOk(page.receipts.some(r => (r.action as { parameters?: { request_id?: string } } | undefined)?.parameters?.request_id === victim.request_id), 'no core form of it')
  t.ok(page.receipts.filter(r => 'decision' in r).every(r => verifyCoreReceipt(r, { trustedKeys: [key] }).ok), 'the others get core forms that verify')
  t.match(page.unverifiedReceipts, [{ receiptId: victim.id, failedStep: 'receipt_id' }])
  t.equal(page.unverifiedReceipts?.length, 1)
  const point = (await call(`${trust.url}/v1/receipts/${victim.id}`, { headers: admin })).body as { receipt: Record<string, unknown>; unverifiedReceipts?: unknown[] }
  t.notOk('decision' in point.receipt)
  t.match(point.unverifiedReceipts, [{ receiptId: victim.id, failedStep: 'receipt_id' }])
  t.equal(await unverifiedCount(trust.url, { path: 'read', step: 'receipt_id' }), 2)

  // every row was appended by another process (this test): the log verifies each, and stops at the altered one
  const flushed = await call(`${trust.url}/v1/checkpoints?timeoutMs=5000`, { method: 'POST', headers: admin })
  t.equal(flushed.status, 500)
  t.match(flushed.body, { error: new RegExp(`receipt seq 2 \\(${victim.id}\\) does not verify \\(receipt_id: `) })
  t.match((await call(`${trust.url}/v1/checkpoints/status`, { headers: admin })).body, { treeSize: 1, lastCheckpoint: null })
  t.equal(await unverifiedCount(trust.url, { path: 'checkpoint', step: 'receipt_id' }), 1)

  t.equal(await trust.stop(), 0)
  t.equal((await pg.receipts.query.getById(victim.id))?.coreJson, null, 'no core form stored for it')
  t.not((await pg.receipts.query.getById(receipts[0]!.id))?.coreJson, null)
})

t.test('on PostgreSQL a key rotation signs no core form over a receipt altered in the database', { skip: skip ?? false }, async t => {
  const dir = t.testdir({ 'service-token': SERVICE_TOKEN })
  const url = await server!.createDatabase('gate_rotation')
  // the authority key lives in the database: the rotation retires it
  const trust = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'service-token')], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => trust.stop('SIGKILL'))
  const ids = ['cap_rotation_a', 'cap_rotation_b', 'cap_rotation_c']
  // each new revocation stores a receipt signed by the authority key, without a core form yet
  for (const id of ids) t.equal((await call(`${trust.url}/v1/revocations`, { body: { capabilityId: id }, headers: admin })).status, 200)
  const pg = await openPgStores({ url, derivePublicKey })
  t.teardown(() => pg.close())
  const rows: StoredReceipt[] = []
  for await (const row of pg.receipts.query.iterate()) rows.push(row)
  const byCapability = (id: string) => rows.find(r => r.capabilityId === id)!
  t.equal(await pg.db.run('UPDATE receipts SET http_json = replace(http_json, $1, $2) WHERE receipt_id = $3', [`capability ${ids[1]} revoked`, `capability ${ids[1]} revokeD`, byCapability(ids[1]!).receiptId]), 1)

  const retiring = (await call(`${trust.url}/v1/authority`, { headers: admin })).body as { publicKey: string }
  const rotated = await call(`${trust.url}/v1/authority`, { method: 'POST', headers: admin })
  t.equal(rotated.status, 200, rotated.text)
  t.match(trust.output(), /rotation: stored the core form of 2 receipt\(s\) signed by the retiring key, refused 1 that do not verify/)
  t.equal(await unverifiedCount(trust.url, { path: 'rotation', step: 'receipt_id' }), 1)
  const core = async (id: string) => (await pg.receipts.query.getById(byCapability(id).receiptId))?.coreJson ?? null
  t.equal(await core(ids[1]!), null, 'the altered one keeps its HTTP form only')
  for (const id of [ids[0]!, ids[2]!]) t.match(verifyCoreReceipt(JSON.parse((await core(id))!), { trustedKeys: [retiring.publicKey] }), { ok: true }, `${id}: converted under the retiring key`)
})
