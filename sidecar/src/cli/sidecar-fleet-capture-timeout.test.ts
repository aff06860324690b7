// A denied call spends nothing (issue 41, fault 1): a capture stuck behind a locked counter row is
// answered `budget_authority_unreachable` by the sidecar, and when the lock goes the capture does not
// commit after all (trust-control commits nothing past half the sidecar's deadline; the sidecar cancels
// what it got no answer for). Captures are named: a retry counts once, a cancel gives one back.
// Real processes and a real PostgreSQL.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner } from '@gate/sdk'
import { openPgStores, type PgStores } from '@gate/trust/postgres'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import type { Test } from 'tap'
import { evaluate, FLEET_TOKEN, issueCentrally, startFleetSidecar, waitUntil } from '../testing/fleet.js'
import { call } from '../testing/http-client.js'
import { spawnGate, type GateProcess } from '../testing/spawn-gate.js'

const skip = postgresSkipReason()
const AUTH = { authorization: `Bearer ${FLEET_TOKEN}` }

async function startControl(t: Test, dir: string): Promise<{ control: GateProcess; stores: PgStores }> {
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_capture')
  mkdirSync(join(dir, 'control'))
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const control = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'control', 'token'), '--checkpoint-every', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => control.stop('SIGKILL'))
  const stores = await openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  return { control, stores }
}

const usedOf = async (stores: PgStores, capabilityId: string) => (await stores.budgets.usage(capabilityId)).grants[0]?.used

t.test('a capture held behind a locked counter is denied and never counts, even once the lock goes', { skip }, async t => {
  const dir = t.testdir()
  const { control, stores } = await startControl(t, dir)
  const sidecar = await startFleetSidecar(t, dir, 1, control.url)
  const capability = await issueCentrally(control.url, 10)
  t.match(await evaluate(sidecar.url, capability), { verdict: 'allow' })
  t.equal(await usedOf(stores, capability.id), 1)

  // a long transaction holds the counter row for longer than the sidecar waits
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>(resolve => (locked = resolve))
  const holder = stores.db.withClient(async client => {
    await client.query('BEGIN')
    await client.query('SELECT 1 FROM invocation_budgets WHERE capability_id = $1 FOR UPDATE', [capability.id])
    locked()
    await released
    await client.query('COMMIT')
  })
  await isLocked
  t.match(await evaluate(sidecar.url, capability), { verdict: 'deny', reasonCode: 'budget_authority_unreachable' }, 'the sidecar denies the call')
  release()
  await holder
  const inFlight = async () =>
    (await stores.db.get<{ n: number }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name LIKE 'gate trust serve%' AND state <> 'idle'"))?.n ?? 0
  await waitUntil('no capture is left in flight at trust-control', async () => (await inFlight()) === 0)
  t.equal(await usedOf(stores, capability.id), 1, 'the denied call counted nothing')
  await waitUntil('the sidecar cancelled the capture it got no result for', async () => {
    const row = await stores.db.get<{ n: number }>("SELECT count(*) AS n FROM budget_captures WHERE state = 'cancelled'")
    return (row?.n ?? 0) === 1
  })
  t.match(await evaluate(sidecar.url, capability), { verdict: 'allow' }, 'the next call is allowed')
  t.equal(await usedOf(stores, capability.id), 2, 'and counts once')
})

t.test('a named capture counts once however often it is sent; a cancel gives it back and refuses it after', { skip }, async t => {
  const dir = t.testdir()
  const { control, stores } = await startControl(t, dir)
  const capability = await issueCentrally(control.url, 10)
  const plan = { invocations: [{ owner: capability.id, key: '0:POST /pets', max: 10, fixedMax: false, kind: 'grant' }], captureId: 'req-41-1', deadlineMs: 15_000 }
  const capture = () => call(`${control.url}/v1/budgets/capture`, { body: plan, headers: AUTH })
  const first = await capture()
  t.same([first.status, first.body], [200, { allowed: true, used: [1], costUnits: [] }])
  const again = await Promise.all([capture(), capture()])
  t.same(
    again.map(r => [r.status, r.body]),
    [
      [200, { allowed: true, used: [1], costUnits: [] }],
      [200, { allowed: true, used: [1], costUnits: [] }],
    ],
    'a retry answers the first result',
  )
  t.equal(await usedOf(stores, capability.id), 1, 'and counts nothing more')
  const cancel = () => call(`${control.url}/v1/budgets/cancel`, { body: { captureId: 'req-41-1' }, headers: AUTH })
  t.same((await cancel()).body, { captureId: 'req-41-1', reversed: true })
  t.equal(await usedOf(stores, capability.id), 0, 'the cancel gave the invocation back')
  t.same((await cancel()).body, { captureId: 'req-41-1', reversed: false }, 'a second cancel changes nothing')
  t.match(await capture(), { status: 409, body: { error: /req-41-1 was cancelled/ } }, 'the cancelled id does not capture again')
  t.match(await call(`${control.url}/v1/budgets/cancel`, { body: { captureId: 'a b' }, headers: AUTH }), { status: 400, body: { error: /captureId/ } })
  t.match(await call(`${control.url}/v1/budgets/cancel`, { body: { captureId: 'req-41-1' } }), { status: 401 }, 'the service token is required')
  t.equal(await usedOf(stores, capability.id), 0)
})
