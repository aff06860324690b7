// Budget captures on one busy capability must not starve a trust-control node: while captures queue on
// one counter row (the test holds its lock, as a long transaction would), the node's revocation feed,
// /health and revocations still answer at once, and a connected sidecar keeps deciding capabilities with
// fresh revocations (none denied as stale). Real processes and a real PostgreSQL.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner } from '@gate/sdk'
import { openPgStores } from '@gate/trust/postgres'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { evaluate, FLEET_TOKEN, fleetHealth, issueCentrally, revokeCentrally, startFleetSidecar, waitUntil } from '../testing/fleet.js'
import { call } from '../testing/http-client.js'
import { spawnGate } from '../testing/spawn-gate.js'

const skip = postgresSkipReason()
const AUTH = { authorization: `Bearer ${FLEET_TOKEN}` }

t.test('captures queued on one locked counter leave the feed, /health and revocations answering', { skip }, async t => {
  const dir = t.testdir()
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_busy')
  mkdirSync(join(dir, 'control'))
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const control = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'control', 'token'), '--checkpoint-every', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => control.stop('SIGKILL'))
  const stores = await openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey })
  t.teardown(() => stores.close())
  // a 6 s staleness bound: the feed is held 2 s at a time, so a feed starved for 5 s makes it stale
  const sidecar = await startFleetSidecar(t, dir, 1, control.url, ['--max-revocation-staleness', '6'])
  const busy = await issueCentrally(control.url, 1_000_000)
  const steady = await issueCentrally(control.url)
  const doomed = await issueCentrally(control.url)
  t.match(await evaluate(sidecar.url, busy), { verdict: 'allow' }, 'the busy capability has its counter row')

  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>(resolve => (locked = resolve))
  const holder = stores.db.withClient(async client => {
    await client.query('BEGIN')
    await client.query('SELECT 1 FROM invocation_budgets WHERE capability_id = $1 FOR UPDATE', [busy.id])
    locked()
    await released
    await client.query('COMMIT')
  })
  await isLocked

  // pressure: 30 captures of the busy capability at trust-control at all times, until the test ends,
  // each willing to wait 30 s on the lock (a minute's deadline), so they hold whatever connections they get
  const plan = { invocations: [{ owner: busy.id, key: '0:POST /pets', max: 1_000_000, fixedMax: false, kind: 'grant' }], deadlineMs: 60_000 }
  let pressing = true
  const pressure = Array.from({ length: 30 }, async () => {
    while (pressing) await call(`${control.url}/v1/budgets/capture`, { body: plan, headers: AUTH })
  })
  const waiting = async () => (await stores.db.get<{ n: number }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE 'gate trust serve%'"))?.n ?? 0
  await waitUntil('captures wait on the locked row', async () => (await waiting()) >= 4)

  const feed = await call(`${control.url}/v1/revocations?cursor=0`, { headers: AUTH })
  t.equal(feed.status, 200, `the revocation feed answers (${feed.text.slice(0, 120)})`)
  t.equal((await call(`${control.url}/health`)).status, 200, '/health answers 200')
  await revokeCentrally(control.url, doomed.id)
  await waitUntil('the sidecar denies the capability revoked meanwhile', async () => (await evaluate(sidecar.url, doomed)).reasonCode === 'capability_revoked')
  t.match(await evaluate(sidecar.url, steady), { verdict: 'allow' }, 'a capability without a budget is still decided on fresh revocations')
  t.equal((await fleetHealth(sidecar.url)).revocations.stale, false, 'the mirror is not stale')
  t.ok((await waiting()) >= 1, 'and the captures were still queued on the lock all along')

  pressing = false
  release()
  await holder
  await Promise.all(pressure)
})
