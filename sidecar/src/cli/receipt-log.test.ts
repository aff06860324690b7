// End-to-end: a real `gate sidecar` keeps the transparency log; `gate receipt flush|health|proof|
// checkpoint` over --control-url and --receipt-db, the /v1 checkpoint routes, and `gate receipt verify
// --proof` offline against the pinned key.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, hexToBytes, verifyCheckpointStatement, verifyConsistencyProofRecord, type CheckpointStatement } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate, type GateProcess } from '../testing/spawn-gate.js'
import { call, schemaErrors } from '../testing/http-client.js'
import { evaluateMany } from '../testing/evaluate-requests.js'

const TOKEN = 'sidecar-control-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const env = { GATE_CONTROL_TOKEN: TOKEN }

t.test('the sidecar checkpoints its receipts; flush, health, proof and verify --proof work end to end', async t => {
  const files = await gateFiles(t)
  const copy = join(files.dir, 'latest-checkpoint.json')
  const key = createSigner({ secret: hexToBytes(readFileSync(files.seed, 'utf8').trim())! }).publicKey
  let sidecar: GateProcess | undefined = await spawnGate(
    ['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--checkpoint-every', '5', '--checkpoint-interval-secs', '0', '--checkpoint-copy', copy],
    { env },
  )
  t.teardown(() => sidecar?.stop('SIGKILL'))
  t.match(sidecar.output(), /transparency log: checkpoints every 5 receipts, on request, copied to /)
  const receipts = await evaluateMany(sidecar.url, 12)
  const remote = ['--control-url', sidecar.url]

  const flushed = await runGate(['receipt', 'flush', ...remote, '--timeout-ms', '5000', '--json'], { env })
  t.equal(flushed.code, 0, flushed.stderr)
  const { checkpoint, created } = JSON.parse(flushed.stdout) as { checkpoint: CheckpointStatement; created: boolean }
  t.equal(checkpoint.tree_size, 12, 'the flush checkpoint covers every receipt answered')
  t.ok(typeof created === 'boolean')
  t.same(schemaErrors('gate.checkpoint_statement.v2', checkpoint), [])
  t.match(verifyCheckpointStatement(checkpoint, { trustedKeys: [key] }), { ok: true })
  t.same(JSON.parse(readFileSync(copy, 'utf8')), checkpoint, '--checkpoint-copy holds the newest statement')
  const again = JSON.parse((await runGate(['receipt', 'flush', ...remote, '--json'], { env })).stdout) as { created: boolean; checkpoint: CheckpointStatement }
  t.same(again, { checkpoint, created: false }, 'a second flush finds everything checkpointed')

  const health = await runGate(['receipt', 'health', ...remote, '--json'], { env })
  t.equal(health.code, 0, health.stderr)
  t.match(JSON.parse(health.stdout), {
    healthy: true,
    store: { reachable: true, healthy: true },
    lastCommit: { seq: 12 },
    treeSize: 12,
    pendingLeaves: 0,
    lastCheckpoint: { treeSize: 12, rootHash: checkpoint.root_hash, signerKey: key },
    uncheckpointedReceipts: 0,
    lastError: null,
  })
  t.match((await runGate(['receipt', 'health', ...remote], { env })).stdout, /tree size:\s+12 \(0 committed/)

  // the checkpoint routes
  t.equal((await call(`${sidecar.url}/v1/checkpoints`)).status, 401, 'the control token guards them')
  const listed = await call(`${sidecar.url}/v1/checkpoints`, { headers: auth })
  const sizes = (listed.body as { checkpoints: CheckpointStatement[] }).checkpoints.map(c => c.tree_size)
  t.same(sizes.slice(-1), [12])
  t.same(sizes, [5, 10, 12], 'a checkpoint at every multiple of 5, then the flush')
  const consistency = await call(`${sidecar.url}/v1/checkpoints/consistency?first=5&second=12`, { headers: auth })
  t.equal(consistency.status, 200, consistency.text)
  t.same(schemaErrors('gate.checkpoint_consistency_proof.v2', consistency.body), [])
  t.same(verifyConsistencyProofRecord(consistency.body, { trustedKeys: [key] }), { ok: true, signerTrusted: true })
  t.equal((await call(`${sidecar.url}/v1/checkpoints/7`, { headers: auth })).status, 404)
  t.equal((await call(`${sidecar.url}/v1/checkpoints/consistency?first=12&second=5`, { headers: auth })).status, 400)
  t.same((await call(`${sidecar.url}/v1/checkpoints/latest`, { headers: auth })).body, checkpoint)

  // a proof, checked offline against the pinned key
  const target = receipts[6]!
  const proof = await runGate(['receipt', 'proof', target.id, ...remote], { env })
  t.equal(proof.code, 0, proof.stderr)
  const record = JSON.parse(proof.stdout) as { leaf_index: number; tree_size: number }
  t.same(schemaErrors('gate.transparency.inclusion-proof.v2', record), [])
  t.match(record, { leaf_index: 6, tree_size: 12 })
  const receiptFile = join(files.dir, 'receipt.json')
  const proofFile = join(files.dir, 'proof.json')
  writeFileSync(receiptFile, JSON.stringify(target))
  writeFileSync(proofFile, proof.stdout)
  const verified = await runGate(['receipt', 'verify', receiptFile, '--proof', proofFile, '--trusted-key', key])
  t.equal(verified.code, 0, verified.stdout + verified.stderr)
  t.match(verified.stdout, new RegExp(`ok ${target.id} included at leaf 6 of checkpoint tree size 12 \\(checkpoint signer trusted\\)`))
  const otherKey = createSigner({ secret: new Uint8Array(32).fill(3) }).publicKey
  t.equal((await runGate(['receipt', 'verify', receiptFile, '--proof', proofFile, '--trusted-key', otherKey])).code, 1, 'another pinned key fails')
  writeFileSync(proofFile, proof.stdout.replace(/"leaf_index":6/, '"leaf_index":5'))
  const forged = await runGate(['receipt', 'verify', receiptFile, '--proof', proofFile, '--trusted-key', key])
  t.equal(forged.code, 1)
  t.match(forged.stdout, /FAIL \S+ proof proof: the audit path does not lead/)
  t.notMatch(forged.stdout, /proof missing/, 'a proof that failed is reported by its failure only')
  writeFileSync(join(files.dir, 'two.json'), JSON.stringify([target, receipts[7]]))
  writeFileSync(proofFile, proof.stdout)
  const missing = await runGate(['receipt', 'verify', join(files.dir, 'two.json'), '--proof', proofFile, '--trusted-key', key])
  t.equal(missing.code, 1, 'a receipt without a proof fails')
  t.match(missing.stdout, new RegExp(`FAIL ${receipts[7]!.id} proof missing`))

  // a receipt after the newest checkpoint is not provable yet: 409
  const [late] = await evaluateMany(sidecar.url, 1)
  const lateProof = await call(`${sidecar.url}/v1/receipts/${late!.id}/proof`, { headers: auth })
  t.equal(lateProof.status, 409, lateProof.text)
  t.match(lateProof.body, { error: /is not covered by a checkpoint yet: it is leaf 12, the checkpoint covers 12 leaves/ })
  t.equal((await call(`${sidecar.url}/v1/receipts/${'0'.repeat(64)}/proof`, { headers: auth })).status, 404)

  // SIGTERM signs a last checkpoint; then the file answers locally
  t.equal(await sidecar.stop('SIGTERM'), 0)
  sidecar = undefined
  const local = ['--receipt-db', files.db]
  const status = await runGate(['receipt', 'checkpoint', 'status', ...local, '--json'])
  t.equal(status.code, 0, status.stderr)
  t.match(JSON.parse(status.stdout), { lastCheckpoint: { treeSize: 13 }, treeSize: 13, uncheckpointedReceipts: 0 })
  const localProof = await runGate(['receipt', 'proof', late!.id, ...local])
  t.equal(localProof.code, 0, localProof.stderr)
  t.match(JSON.parse(localProof.stdout), { leaf_index: 12, tree_size: 13 })
  const unsigned = await runGate(['receipt', 'checkpoint', 'create', ...local])
  t.equal(unsigned.code, 0, 'nothing new to sign needs no key')
  t.match(unsigned.stdout, /already checkpointed: tree size 13/)
  const audit = await runGate(['receipt', 'audit', ...local, '--trusted-key', key, '--checkpoint', copy, '--json'])
  t.equal(audit.code, 0, audit.stdout + audit.stderr)
  t.match(JSON.parse(audit.stdout), { ok: true, firstBadIndex: null, receipts: 13, checkpoints: { pinned: 1 } })
})

t.test('flush over --receipt-db signs with --authority-seed-file and refuses without it', async t => {
  const files = await gateFiles(t)
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--checkpoint-every', '0', '--checkpoint-interval-secs', '0'], { env })
  t.teardown(() => sidecar.stop('SIGKILL'))
  await evaluateMany(sidecar.url, 3)
  const local = ['--receipt-db', files.db]
  const refused = await runGate(['receipt', 'flush', ...local])
  t.equal(refused.code, 2, refused.stderr)
  t.match(refused.stderr, /needs --authority-seed-file/)
  const signed = await runGate(['receipt', 'flush', ...local, '--authority-seed-file', files.seed, '--json'])
  t.equal(signed.code, 0, signed.stderr)
  t.match(JSON.parse(signed.stdout), { created: true, checkpoint: { tree_size: 3 } })
  // the sidecar beside it carries on from the tree the CLI grew
  await evaluateMany(sidecar.url, 2)
  const remote = await runGate(['receipt', 'checkpoint', 'create', '--control-url', sidecar.url, '--json'], { env })
  t.equal(remote.code, 0, remote.stderr)
  const created = JSON.parse(remote.stdout) as { checkpoint: CheckpointStatement }
  t.match(created, { created: true, checkpoint: { tree_size: 5 } })
  t.equal(typeof created.checkpoint.chain_root, 'string', 'linked to the checkpoint the CLI signed')
  t.equal((await runGate(['receipt', 'flush', ...local, '--timeout-ms', 'soon'])).code, 2, 'a bad --timeout-ms is a usage error')
})

t.test('--no-transparency-log keeps no tree: the routes answer 404 and health says why', async t => {
  const files = await gateFiles(t)
  const sidecar = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--no-transparency-log'], { env })
  t.teardown(() => sidecar.stop('SIGKILL'))
  t.match(sidecar.output(), /transparency log: off \(--no-transparency-log\)/)
  const health = await runGate(['receipt', 'health', '--control-url', sidecar.url], { env })
  t.equal(health.code, 1)
  t.match(health.stderr, /404/)
  t.equal((await call(`${sidecar.url}/v1/checkpoints`, { headers: auth })).status, 404)
  const bad = await runGate(['sidecar', '--receipt-store', join(files.dir, 'x.db'), '--no-transparency-log', '--checkpoint-every', '5'])
  t.equal(bad.code, 2, 'the flags contradict each other')
})

t.test('gate sidecar, gate api protect and gate trust serve all take the checkpoint flags', async t => {
  const required: Record<string, string[]> = {
    sidecar: ['--allow-ephemeral-receipts'],
    'api protect': ['--allow-ephemeral-receipts', '--upstream', 'http://127.0.0.1:1'],
    'trust serve': ['--receipt-db', join(t.testdir(), 'r.db')],
  }
  for (const [command, args] of Object.entries(required)) {
    const words = command.split(' ')
    const help = await runGate([...words, '--help'])
    t.equal(help.code, 0)
    for (const flag of ['--checkpoint-every N', '--checkpoint-interval-secs T', '--checkpoint-copy PATH', '--no-transparency-log']) t.match(help.stdout, flag, `${command} ${flag}`)
    const bad = await runGate([...words, ...args, '--checkpoint-every', 'often'])
    t.equal(bad.code, 2, `${command} refuses --checkpoint-every often`)
    t.match(bad.stderr, /--checkpoint-every must be a non-negative integer, got "often"/)
  }
})
