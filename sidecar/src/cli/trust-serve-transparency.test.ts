// End-to-end: `gate trust serve` over a receipt file a real sidecar wrote keeps the transparency log
// too: it picks up receipts the sidecar appends, scopes proofs by tenant, keeps checkpoints an admin
// surface, and reports real checkpoint coverage in the operator report.
import t from 'tap'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { verifyInclusionProofRecord, type CheckpointStatement } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { evaluateMany } from '../testing/evaluate-requests.js'
import { openDatabase } from '../stores/index.js'

const SERVICE_TOKEN = 'trust-service-token-0123456789abcdef'
const ACME_TOKEN = 'acme-read-token-0123456789abcdef'
const admin = { authorization: `Bearer ${SERVICE_TOKEN}` }
const acme = { authorization: `Bearer ${ACME_TOKEN}` }

t.test('trust serve proves, lists and reports checkpoints over the sidecar file', async t => {
  const files = await gateFiles(t)
  writeFileSync(join(files.dir, 'service-token'), SERVICE_TOKEN, { mode: 0o600 })
  writeFileSync(join(files.dir, 'acme-token'), ACME_TOKEN, { mode: 0o600 })
  const sidecar: GateProcess = await spawnGate(
    ['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--no-transparency-log'],
    { env: { GATE_CONTROL_TOKEN: 'sidecar-control-token-0123456789' } },
  )
  t.teardown(() => sidecar.stop('SIGKILL'))
  const receipts = await evaluateMany(sidecar.url, 10, n => (n % 2 === 0 ? 'acme' : 'globex'))
  const trust = await spawnGate(
    ['trust', 'serve', '--listen', '127.0.0.1:0', '--receipt-db', files.db, '--authority-seed-file', files.seed, '--service-token-file', join(files.dir, 'service-token'), '--tenant-token', `acme=${join(files.dir, 'acme-token')}`, '--checkpoint-every', '0', '--checkpoint-interval-secs', '0'],
    { env: { GATE_CONTROL_TOKEN: '' } },
  )
  t.teardown(() => trust.stop('SIGKILL'))
  t.match(trust.output(), /transparency log: tree and checkpoints in sqlite /)

  const report = async () => (await call(`${trust.url}/v1/reports/operator`, { headers: admin })).body as { compliance: { checkpointCoverage: Record<string, unknown> } }
  t.match((await report()).compliance.checkpointCoverage, { checkpointedReceipts: 0, uncheckpointedReceipts: 10, checkpointCount: 0, coverageRate: 0, latestCheckpointTreeSize: null })

  // receipts the sidecar appends later: the flush reads what the other process committed
  await evaluateMany(sidecar.url, 2, () => 'acme')
  const created = await call(`${trust.url}/v1/checkpoints?timeoutMs=5000`, { method: 'POST', headers: admin })
  t.equal(created.status, 200, created.text)
  const checkpoint = (created.body as { checkpoint: CheckpointStatement }).checkpoint
  t.equal(checkpoint.tree_size, 12)
  t.equal((await call(`${trust.url}/v1/checkpoints?timeoutMs=5000`, { method: 'POST', headers: acme })).status, 403, 'a tenant cannot sign checkpoints')
  t.equal((await call(`${trust.url}/v1/checkpoints`, { headers: acme })).status, 403, 'nor list them')
  t.equal((await call(`${trust.url}/v1/checkpoints/status`, { headers: acme })).status, 403)
  t.equal((await call(`${trust.url}/v1/checkpoints`, { method: 'PUT', headers: admin })).status, 405)
  t.equal((await call(`${trust.url}/v1/checkpoints?bogus=1`, { headers: admin })).status, 400, 'unknown query parameters are refused')

  const mine = receipts[4]! // acme
  const theirs = receipts[5]! // globex
  const proof = await call(`${trust.url}/v1/receipts/${mine.id}/proof`, { headers: acme })
  t.equal(proof.status, 200, proof.text)
  t.same(verifyInclusionProofRecord(proof.body, { trustedKeys: [checkpoint.signer_key], receiptId: mine.id }), { ok: true, signerTrusted: true })
  t.equal((await call(`${trust.url}/v1/receipts/${theirs.id}/proof`, { headers: acme })).status, 404, "another tenant's receipt is not found")
  t.equal((await call(`${trust.url}/v1/receipts/${theirs.id}/proof`, { headers: admin })).status, 200)
  t.equal((await call(`${trust.url}/v1/receipts/${mine.id}/proof?treeSize=11`, { headers: admin })).status, 404, 'no checkpoint of that size')

  t.match((await report()).compliance.checkpointCoverage, { checkpointedReceipts: 12, uncheckpointedReceipts: 0, checkpointCount: 1, coverageRate: 1, latestCheckpointTreeSize: 12 })

  // a tree node changed under the running service: the proof no longer verifies and is not served
  const db = await openDatabase(files.db)
  await db.exec('UPDATE transparency_nodes SET hash = zeroblob(32) WHERE level = 0 AND idx = 5')
  await db.close()
  const broken = await call(`${trust.url}/v1/receipts/${mine.id}/proof`, { headers: admin })
  t.equal(broken.status, 500, 'fails closed')
  t.match(broken.body, { error: /the proof of receipt \S+ against checkpoint 12 does not verify/ })
  await evaluateMany(sidecar.url, 4)
  const later = (await call(`${trust.url}/v1/reports/operator`, { headers: admin })).body as { compliance: { checkpointCoverage: Record<string, unknown> } }
  t.match(later.compliance.checkpointCoverage, { checkpointedReceipts: 12, uncheckpointedReceipts: 4, coverageRate: 0.75 })
  const filtered = (await call(`${trust.url}/v1/reports/operator?until=0`, { headers: admin })).body as { compliance: { checkpointCoverage: Record<string, unknown> } }
  t.match(filtered.compliance.checkpointCoverage, { checkpointedReceipts: 0, uncheckpointedReceipts: 0 }, 'coverage follows the report filters')
})
