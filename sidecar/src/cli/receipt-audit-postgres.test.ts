// `gate receipt audit --database-url`: the same audit over trust-control's PostgreSQL receipts. A fleet
// sidecar ships its receipts to a real `gate trust serve --database-url`; the untouched database
// audits ok, and a deleted row and a row whose filter columns were rewritten under its untouched
// signed receipt are both reported, as on SQLite. Skipped where no PostgreSQL is found (never in CI).
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { call } from '../testing/http-client.js'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { runGate, spawnGate } from '../testing/spawn-gate.js'
import { evaluate, FLEET_TOKEN, fleetHealth, issueCentrally, startFleetSidecar, waitUntil } from '../testing/fleet.js'

const skip = postgresSkipReason()

interface Report {
  ok: boolean
  receipts: number
  findings: { kind: string; index: number | null; count: number; detail: string }[]
}

t.test('the audit reads trust-control on PostgreSQL with the same checks', { skip }, async t => {
  const dir = t.testdir()
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_audit')
  mkdirSync(join(dir, 'control'))
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const control = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'control', 'token')], { env: { GATE_CONTROL_TOKEN: '' } })
  t.teardown(() => control.stop('SIGKILL'))
  const sidecar = await startFleetSidecar(t, dir, 1, control.url)
  await waitUntil('the sidecar enrolled its key', async () => (await fleetHealth(sidecar.url)).key_enrolled)
  const capability = await issueCentrally(control.url)
  for (let i = 0; i < 12; i++) t.match(await evaluate(sidecar.url, i % 2 === 0 ? capability : undefined), { verdict: 'allow' })
  await waitUntil('the outbox drained', async () => (await fleetHealth(sidecar.url)).outbox.lag === 0)
  const flushed = await call(`${control.url}/v1/checkpoints`, { method: 'POST', headers: { authorization: `Bearer ${FLEET_TOKEN}` } })
  t.equal(flushed.status, 200, 'every stored receipt is in a checkpoint')
  t.equal(await sidecar.stop('SIGTERM'), 0)
  t.equal(await control.stop('SIGTERM'), 0)

  const audit = async () => {
    // the URL from the environment, as an operator keeps its password out of argv
    const r = await runGate(['receipt', 'audit', '--json'], { env: { GATE_DATABASE_URL: url } })
    t.equal(r.stderr, '')
    return { code: r.code, report: JSON.parse(r.stdout) as Report }
  }
  const clean = await audit()
  t.equal(clean.code, 0, JSON.stringify(clean.report.findings))
  t.match(clean.report, { ok: true, receipts: 12, findings: [] })

  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('DELETE FROM receipts WHERE seq = 4')
    await client.query("UPDATE receipts SET outcome = 'deny', capability_id = 'cap_forged' WHERE seq = 9")
  } finally {
    await client.end()
  }
  const tampered = await audit()
  t.equal(tampered.code, 1)
  t.match(tampered.report.findings, [
    { kind: 'missing_row', index: 3, count: 1, detail: /no receipt at seq 4/ },
    { kind: 'altered_row', index: 8, count: 1, detail: /seq 9: the outcome column is "deny", the signed receipt says "allow"; the capability_id column is "cap_forged", the signed receipt says (null|"[^"]+")/ },
  ])
  t.equal(tampered.report.findings.length, 2)
  t.equal((await runGate(['receipt', 'audit', '--receipt-db', join(dir, 'x.db')], { env: { GATE_DATABASE_URL: url } })).code, 2, 'one source, not both')
})
