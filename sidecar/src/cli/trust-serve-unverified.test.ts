// End-to-end: nothing is signed over a stored receipt that does not verify (issue 37, point 1). A real
// `gate sidecar` writes receipts; one byte of two of them is changed in the SQLite file (sqlite3) before
// anything read them. `gate trust serve`, and a `gate sidecar` over the same file, then serve them as
// stored and list them in `unverifiedReceipts` with the failing step, never as freshly signed core
// receipts, on the query, the agent route and the point load; `gate receipt list` and `gate receipt
// explain` say "not verified"; gate_receipts_unverified_total counts each refusal; no core form is stored
// for them. And the transparency log does not make a leaf of a tampered row another process appended.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, generateSecret, sha256Hex, uuidv7, verifyCoreReceipt, type HttpReceipt } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { evaluateMany } from '../testing/evaluate-requests.js'
import { metricValue, parseMetrics } from '../testing/metrics-text.js'
import { openDatabase, openReceiptStore } from '../stores/index.js'

const CONTROL_TOKEN = 'sidecar-control-token-0123456789'
const SERVICE_TOKEN = 'trust-service-token-0123456789abcdef'
const admin = { authorization: `Bearer ${SERVICE_TOKEN}` }
const control = { authorization: `Bearer ${CONTROL_TOKEN}` }

interface QueryBody {
  totalCount: number
  receipts: Record<string, unknown>[]
  unverifiedReceipts?: { receiptId: string; seq: number; failedStep: string; detail: string }[]
}

/** Replaces `from` with `to` in the stored HTTP receipt of `receiptId`, with the sqlite3 driver; the rows changed. */
async function alterStored(db: string, receiptId: string, from: string, to: string): Promise<number> {
  const conn = await openDatabase(db, { driver: 'sqlite3' })
  try {
    return (await conn.run('UPDATE receipts SET http_json = replace(http_json, ?, ?) WHERE receipt_id = ? AND instr(http_json, ?) > 0', [from, to, receiptId, from])).changes
  } finally {
    await conn.close()
  }
}

async function unverifiedCount(url: string, auth: Record<string, string>, labels: Record<string, string>): Promise<number> {
  const res = await call(`${url}/metrics`, { headers: auth })
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
  return metricValue(parseMetrics(res.text), 'gate_receipts_unverified_total', labels)
}

async function evaluate(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<HttpReceipt> {
  const r = await call(`${url}/gate/evaluate`, {
    body: { request_id: uuidv7(), method, path, route_pattern: path, caller: { subject: 'u1', auth_method: { method: 'bearer', token_hash: sha256Hex('t1') } }, timestamp: Math.floor(Date.now() / 1000) },
    headers,
  })
  if (r.status !== 200) throw new Error(`evaluate ${method} ${path}: ${r.status} ${r.text}`)
  return (r.body as { receipt: HttpReceipt }).receipt
}

/** The served entry of a request: its core form (action.parameters.request_id) or its HTTP form. */
function servedFor(receipts: Record<string, unknown>[], requestId: string): Record<string, unknown> | undefined {
  return receipts.find(r => r.request_id === requestId || (r.action as { parameters?: { request_id?: unknown } } | undefined)?.parameters?.request_id === requestId)
}

t.test('a stored receipt changed by one byte is served as stored and reported unverified, never signed', async t => {
  const files = await gateFiles(t)
  const tokenFile = join(files.dir, 'service-token')
  writeFileSync(tokenFile, SERVICE_TOKEN, { mode: 0o600 })
  const key = createSigner({ secret: Buffer.from(readFileSync(files.seed, 'utf8').trim(), 'hex') }).publicKey
  const agent = createSigner({ secret: generateSecret() }).publicKey

  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const issued = await call(`${sidecar.url}/v1/capabilities/issue`, { body: { subjectPublicKey: agent, scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 600 }, headers: control })
  const capability = Buffer.from(JSON.stringify((issued.body as { capability: unknown }).capability)).toString('base64url')
  const victim = await evaluate(sidecar.url, 'GET', '/pets/1')
  const intact = await evaluate(sidecar.url, 'GET', '/pets/2')
  const agentVictim = await evaluate(sidecar.url, 'POST', '/pets', { 'x-gate-capability': capability })
  t.equal(agentVictim.verdict.verdict, 'allow')
  t.equal(await sidecar.stop(), 0)

  // before anything read them (no core form stored yet): one byte of each
  t.equal(await alterStored(files.db, victim.id, 'safe method GET', 'safe method GEt'), 1, 'GET -> GEt in the stored JSON')
  t.equal(await alterStored(files.db, agentVictim.id, '"method":"POST"', '"method":"POSt"'), 1, 'POST -> POSt in the stored JSON')

  const trust: GateProcess = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', files.db, '--authority-seed-file', files.seed, '--service-token-file', tokenFile], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => trust.stop('SIGKILL'))
  const readRefusals = { path: 'read', step: 'receipt_id' }
  t.equal(await unverifiedCount(trust.url, admin, readRefusals), 0)

  // the query route
  const query = await call(`${trust.url}/v1/receipts/query?limit=200`, { headers: admin })
  t.equal(query.status, 200)
  const page = query.body as QueryBody
  t.equal(page.receipts.length, 3, 'nothing is dropped from the page')
  const served = servedFor(page.receipts, victim.request_id)!
  t.notOk('decision' in served, 'the altered receipt is not served as a core receipt')
  t.match(JSON.stringify(served), /safe method GEt/, 'it is served as stored')
  const core = servedFor(page.receipts, intact.request_id)!
  t.match(verifyCoreReceipt(core, { trustedKeys: [key] }), { ok: true }, 'the intact one gets its core form')
  t.match(page.unverifiedReceipts, [
    { receiptId: victim.id, failedStep: 'receipt_id', detail: /id/ },
    { receiptId: agentVictim.id, failedStep: 'receipt_id' },
  ])
  t.equal(page.unverifiedReceipts?.length, 2)
  t.equal(await unverifiedCount(trust.url, admin, readRefusals), 2, 'each refusal is counted')
  // what a client verifies offline of that answer: the altered one fails, signer trusted or not
  const responseFile = join(files.dir, 'query.json')
  writeFileSync(responseFile, query.text)
  const offline = await runGate(['receipt', 'verify', responseFile, '--trusted-key', key])
  t.equal(offline.code, 1)
  t.match(offline.stdout, new RegExp(`FAIL ${victim.id} receipt_id`))

  // the agent route
  const agentPage = (await call(`${trust.url}/v1/agents/${agent}/receipts`, { headers: admin })).body as QueryBody
  t.notOk('decision' in servedFor(agentPage.receipts, agentVictim.request_id)!)
  t.match(agentPage.unverifiedReceipts, [{ receiptId: agentVictim.id, failedStep: 'receipt_id' }])

  // the point load behind gate receipt explain
  const point = await call(`${trust.url}/v1/receipts/${victim.id}`, { headers: admin })
  t.equal(point.status, 200)
  const loaded = point.body as { receipt: Record<string, unknown>; httpReceipt: Record<string, unknown>; unverifiedReceipts?: unknown[] }
  t.notOk('decision' in loaded.receipt, 'no core form')
  t.same(loaded.receipt, loaded.httpReceipt, 'the stored HttpReceipt, as stored')
  t.match(loaded.unverifiedReceipts, [{ receiptId: victim.id, failedStep: 'receipt_id' }])
  t.notOk('unverifiedReceipts' in ((await call(`${trust.url}/v1/receipts/${intact.id}`, { headers: admin })).body as object), 'absent when there is nothing to say')

  // the CLI over trust-control
  const env = { GATE_CONTROL_TOKEN: SERVICE_TOKEN }
  const list = await runGate(['receipt', 'list', '--control-url', trust.url, '--limit', '200'], { env })
  t.equal(list.code, 1, 'gate receipt list exits 1')
  t.equal(list.stdout.trim().split('\n').length, 3, 'every receipt is printed')
  t.match(list.stdout, /safe method GEt/, 'the altered one as stored')
  t.match(list.stderr, new RegExp(`receipt ${victim.id} \\(seq \\d+\\) not verified: receipt_id: `))
  t.match(list.stderr, new RegExp(`receipt ${agentVictim.id} \\(seq \\d+\\) not verified: receipt_id: `))
  const explained = await runGate(['receipt', 'explain', victim.id, '--control-url', trust.url], { env })
  t.equal(explained.code, 1, 'gate receipt explain exits 1')
  t.match(explained.stdout, /verified: +not verified: receipt_id: .*trust-control refused to sign its core form/)
  t.match(explained.stdout, /core form: +none: nothing is signed over a receipt that does not verify/)
  const fine = await runGate(['receipt', 'explain', intact.id, '--control-url', trust.url], { env })
  t.equal(fine.code, 0, fine.stderr)
  t.match(fine.stdout, /verified: +id and signature verify/)
  const local = await runGate(['receipt', 'explain', victim.id, '--receipt-db', files.db])
  t.equal(local.code, 1)
  t.match(local.stdout, /verified: +not verified: receipt_id: /, 'from the file too')
  // query 2 + agent route 1 + point load 1 + list 2 + explain 1
  t.equal(await unverifiedCount(trust.url, admin, readRefusals), 7)

  // a re-read stored no core form for them (stopping flushes the core forms that were stored)
  t.equal(await trust.stop(), 0)
  const store = await openReceiptStore(files.db)
  const stored = async (id: string) => (await store.query.getById(id))!.coreJson
  t.equal(await stored(victim.id), null)
  t.equal(await stored(agentVictim.id), null)
  t.not(await stored(intact.id), null, 'the intact one got its core form stored')
  await store.close()

  // the sidecar mounts the same routes
  const again = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed], { env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN } })
  t.teardown(() => again.stop('SIGKILL'))
  const fromSidecar = (await call(`${again.url}/v1/receipts/query?limit=200`, { headers: control })).body as QueryBody
  t.notOk('decision' in servedFor(fromSidecar.receipts, victim.request_id)!)
  t.same(fromSidecar.unverifiedReceipts?.map(u => u.receiptId), [victim.id, agentVictim.id])
  t.equal(await unverifiedCount(again.url, control, readRefusals), 2)
  const sidecarPoint = (await call(`${again.url}/v1/receipts/${agentVictim.id}`, { headers: control })).body as { receipt: Record<string, unknown>; unverifiedReceipts?: unknown[] }
  t.notOk('decision' in sidecarPoint.receipt)
  t.match(sidecarPoint.unverifiedReceipts, [{ receiptId: agentVictim.id }])
})

t.test('the transparency log makes no leaf of a tampered row another process appended', async t => {
  const files = await gateFiles(t)
  const tokenFile = join(files.dir, 'service-token')
  writeFileSync(tokenFile, SERVICE_TOKEN, { mode: 0o600 })
  // the sidecar keeps no log: every row is another process's to trust-control
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--no-transparency-log'], {
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
  })
  t.teardown(() => sidecar.stop('SIGKILL'))
  const receipts = await evaluateMany(sidecar.url, 5)
  t.equal(await sidecar.stop(), 0)
  t.equal(await alterStored(files.db, receipts[2]!.id, '"method":"GET"', '"method":"GEt"'), 1)

  const trust = await spawnGate(
    ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', files.db, '--authority-seed-file', files.seed, '--service-token-file', tokenFile, '--checkpoint-every', '0', '--checkpoint-interval-secs', '0'],
    { env: { GATE_CONTROL_TOKEN: '' } },
  )
  t.teardown(() => trust.stop('SIGKILL'))
  const flushed = await call(`${trust.url}/v1/checkpoints?timeoutMs=5000`, { method: 'POST', headers: admin })
  t.equal(flushed.status, 500, 'no checkpoint over it: the flush fails closed')
  t.match(flushed.body, { error: /receipt seq 3 .*does not verify \(receipt_id: / })
  const status = (await call(`${trust.url}/v1/checkpoints/status`, { headers: admin })).body as { treeSize: number; pendingLeaves: number; lastCheckpoint: unknown }
  t.match(status, { treeSize: 2, pendingLeaves: 3, lastCheckpoint: null }, 'the tree stops before it')
  t.equal(await unverifiedCount(trust.url, admin, { path: 'checkpoint', step: 'receipt_id' }), 1, 'counted once, however often the log retries')
})
