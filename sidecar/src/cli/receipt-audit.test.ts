// Tamper tests: a store written by a real `gate sidecar`, copied, then damaged with SQL (a row deleted,
// altered, two rows swapped, the tail cut, the whole file rolled back); the real `gate receipt audit`
// must name each with its first bad index and exit 1, and pass the untouched copy with exit 0.
import t from 'tap'
import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, hexToBytes } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { evaluateMany } from '../testing/evaluate-requests.js'
import { openDatabase } from '../stores/index.js'

const TOKEN = 'sidecar-control-token-0123456789'
const env = { GATE_CONTROL_TOKEN: TOKEN }

interface Report {
  ok: boolean
  firstBadIndex: number | null
  receipts: number
  findings: { kind: string; index: number | null; detail: string }[]
}

t.test('gate receipt audit names deleted, altered, reordered and rolled-back rows', async t => {
  const files = await gateFiles(t)
  const copy = join(files.dir, 'checkpoint-copy.json')
  const key = createSigner({ secret: hexToBytes(readFileSync(files.seed, 'utf8').trim())! }).publicKey
  const start = () =>
    spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', files.spec, '--receipt-store', files.db, '--authority-seed-file', files.seed, '--checkpoint-every', '8', '--checkpoint-interval-secs', '0', '--checkpoint-copy', copy], { env })
  // 24 receipts, checkpointed; the file as it was then is the "older copy" a rollback restores
  let sidecar = await start()
  await evaluateMany(sidecar.url, 24)
  t.equal(await sidecar.stop('SIGTERM'), 0)
  const older = join(files.dir, 'older.db')
  copyStore(files.db, older)
  sidecar = await start()
  t.teardown(() => sidecar.stop('SIGKILL'))
  await evaluateMany(sidecar.url, 16)
  t.equal(await sidecar.stop('SIGTERM'), 0)

  const audit = async (db: string, extra: string[] = []) => {
    const r = await runGate(['receipt', 'audit', '--receipt-db', db, '--trusted-key', key, '--json', ...extra])
    t.not(r.code, 2, r.stderr)
    return { code: r.code, report: JSON.parse(r.stdout) as Report }
  }
  const tampered = async (name: string, sql: string[]) => {
    const path = join(files.dir, `${name}.db`)
    copyStore(files.db, path)
    const db = await openDatabase(path)
    for (const statement of sql) await db.exec(statement)
    await db.close()
    return path
  }

  const clean = await audit(files.db, ['--checkpoint', copy])
  t.equal(clean.code, 0, JSON.stringify(clean.report))
  t.match(clean.report, { ok: true, firstBadIndex: null, receipts: 40 })

  const deleted = await audit(await tampered('deleted', ['DELETE FROM receipts WHERE seq = 11']))
  t.equal(deleted.code, 1)
  t.match(deleted.report, { ok: false, firstBadIndex: 10 })
  t.match(deleted.report.findings[0], { kind: 'missing_row', index: 10 })

  // the stored JSON changed (a deny rewritten as an allow would look like this): its id no longer recomputes
  const altered = await audit(await tampered('altered', ["UPDATE receipts SET http_json = replace(http_json, '\"response_status\":200', '\"response_status\":201') WHERE seq = 21"]))
  t.equal(altered.code, 1)
  t.match(altered.report, { firstBadIndex: 20 })
  t.match(altered.report.findings, [{ kind: 'altered_row', index: 20 }])

  // a receipt replaced by another (id column and JSON together): the tree and the checkpoints catch it
  const replaced = await audit(await tampered('replaced', ['UPDATE receipts SET receipt_id = (SELECT receipt_id FROM receipts WHERE seq = 3), http_json = (SELECT http_json FROM receipts WHERE seq = 3) WHERE seq = 30']))
  t.equal(replaced.code, 1)
  t.match(replaced.report, { firstBadIndex: 29 })
  t.ok(replaced.report.findings.some(f => f.kind === 'root_mismatch' && f.index === 29), JSON.stringify(replaced.report.findings))

  const swap = (a: number, b: number) => [
    `UPDATE receipts SET seq = -1 WHERE seq = ${a}`,
    `UPDATE receipts SET seq = ${a} WHERE seq = ${b}`,
    `UPDATE receipts SET seq = ${b} WHERE seq = -1`,
  ]
  const reordered = await audit(await tampered('reordered', swap(15, 16)))
  t.equal(reordered.code, 1)
  t.match(reordered.report, { firstBadIndex: 14 })
  t.match(reordered.report.findings[0], { kind: 'reordered_row', index: 14 })
  t.ok(reordered.report.findings.some(f => f.kind === 'root_mismatch'), 'the checkpoint of 16 no longer matches')

  // the tail cut off: the store's own checkpoint of 40 covers more than it holds
  const truncated = await audit(await tampered('truncated', ['DELETE FROM receipts WHERE seq > 37']))
  t.equal(truncated.code, 1)
  t.match(truncated.report, { firstBadIndex: 37 })
  t.match(truncated.report.findings, [{ kind: 'rolled_back', index: 37 }])

  // the whole file rolled back to the older copy: consistent inside, caught only by the pinned copy
  const rolledBackAlone = await audit(older)
  t.equal(rolledBackAlone.code, 0, 'an older copy is self-consistent: nothing inside the file can tell')
  const rolledBack = await audit(older, ['--checkpoint', copy])
  t.equal(rolledBack.code, 1)
  t.match(rolledBack.report, { firstBadIndex: 24 })
  t.match(rolledBack.report.findings, [{ kind: 'rolled_back', index: 24, detail: /pinned checkpoint 40/ }])

  // the checkpoints rewritten by someone without the key
  const forged = await audit(await tampered('forged', ["UPDATE transparency_checkpoints SET statement = replace(statement, '\"tree_size\":16', '\"tree_size\":17') WHERE tree_size = 16"]))
  t.equal(forged.code, 1)
  t.match(forged.report.findings, [{ kind: 'checkpoint', detail: /stored checkpoint 17: signature/ }])

  // another authority's key pinned: every checkpoint's signer is untrusted
  const otherKey = createSigner({ secret: new Uint8Array(32).fill(5) }).publicKey
  const untrusted = await runGate(['receipt', 'audit', '--receipt-db', files.db, '--trusted-key', otherKey])
  t.equal(untrusted.code, 1)
  t.match(untrusted.stdout, /FAIL: .*\n[\s\S]*checkpoint: stored checkpoint 8: signer/)

  // the human form names the first bad index
  const text = await runGate(['receipt', 'audit', '--receipt-db', join(files.dir, 'deleted.db'), '--trusted-key', key])
  t.match(text.stdout, /first bad index: 10\n {2}missing_row at index 10: no receipt at seq 11/)
  t.equal((await runGate(['receipt', 'audit'])).code, 2, '--receipt-db is required')
})

// SQLite keeps recent commits in the -wal file until a checkpoint: copy both.
function copyStore(from: string, to: string): void {
  copyFileSync(from, to)
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`)
}

t.test('a --checkpoint file that is not a statement is refused before the audit runs', async t => {
  const dir = t.testdir({ 'bad.json': JSON.stringify({ schema: 'gate.checkpoint_statement.v2', tree_size: 'ten' }), 'receipts.db': '' })
  const r = await runGate(['receipt', 'audit', '--receipt-db', join(dir, 'receipts.db'), '--checkpoint', join(dir, 'bad.json')])
  t.equal(r.code, 1)
  t.match(r.stderr, /--checkpoint .*bad\.json is not a gate\.checkpoint_statement\.v2: /)
})
