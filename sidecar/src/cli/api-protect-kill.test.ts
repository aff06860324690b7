// Kill test of `gate api protect`: under concurrent load through the proxy (allowed GETs, POSTs with
// and without a capability) the process is killed with SIGKILL; after a restart every receipt id a
// client received in X-Gate-Receipt-Id (the finalized receipt) is stored and verifies, and so does the
// decision receipt it names. Bounded: stops after a fixed number of answers.
import t from 'tap'
import { request } from 'undici'
import { gateFiles } from '../testing/gate-files.js'
import { killUnderLoad } from '../testing/kill-under-load.js'
import { checkStoredReceipts } from '../testing/stored-receipts.js'
import { startUpstreamApp } from '../testing/upstream-app.js'
import { loadNodeSqlite } from '../stores/node-sqlite-driver.js'

const CONTROL_TOKEN = 'kill-test-control-token-0123456789'

t.test('kill -9 under load through the proxy loses no acknowledged receipt', async t => {
  const { spec, seed, db } = await gateFiles(t)
  const upstream = await startUpstreamApp()
  t.teardown(() => upstream.close())
  let capability: string | undefined
  const { acknowledged, whileLocked, restarted } = await killUnderLoad(t, {
    args: ['api', 'protect', '--upstream', upstream.url, '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed],
    env: { GATE_CONTROL_TOKEN: CONTROL_TOKEN },
    db,
    clients: 24,
    killAfter: 600,
    async send(url, n) {
      capability ??= await issue(url)
      const kind = n % 3
      const res = await request(`${url}/pets`, {
        method: kind === 0 ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json', ...(kind === 1 ? { 'x-gate-capability': capability } : {}) },
        body: kind === 0 ? undefined : JSON.stringify({ name: `pet ${n}` }),
      })
      await res.body.dump()
      const id = res.headers['x-gate-receipt-id']
      return typeof id === 'string' ? [id] : undefined
    },
  })
  t.ok(acknowledged.length >= 600, `${acknowledged.length} answers acknowledged before the kill`)
  t.comment(`${whileLocked} acknowledged while the write lock was held`)
  const live = (await (await request(`${restarted.url}/gate/live`)).body.json()) as { kernel_key: string }
  const finals = await checkStoredReceipts(db, acknowledged, live.kernel_key)
  t.same(finals.missing, [], 'every acknowledged finalized receipt is stored')
  t.same(finals.invalid, [], 'and verifies')
  const decisionIds = [...finals.receipts.values()].map(r => String((r.metadata as { gate_decision_receipt_id?: unknown } | null)?.gate_decision_receipt_id))
  t.equal(decisionIds.length, acknowledged.length)
  const decisions = await checkStoredReceipts(db, decisionIds, live.kernel_key)
  t.same(decisions.missing, [], 'every decision receipt they name is stored')
  t.same(decisions.invalid, [], 'and verifies')
  // on node:sqlite in the Node 24 re-run of node-sqlite-driver.test; written by the writer thread
  t.match(restarted.output(), new RegExp(`receipts: durable \\(sqlite .+ \\(${loadNodeSqlite() === undefined ? 'sqlite3' : 'node:sqlite'}, signed and committed on the receipt writer thread\\)\\)`))
})

async function issue(url: string): Promise<string> {
  const res = await request(`${url}/v1/capabilities/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectPublicKey: 'ab'.repeat(32), scope: { grants: [{ server_id: 'http', tool_name: 'POST /pets' }] }, ttlSeconds: 3600 }),
  })
  const body = (await res.body.json()) as { capability: unknown }
  if (res.statusCode !== 200) throw new Error(`issue failed: ${res.statusCode}`)
  return Buffer.from(JSON.stringify(body.capability)).toString('base64url')
}
