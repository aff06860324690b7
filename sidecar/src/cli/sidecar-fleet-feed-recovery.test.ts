// After a revocation feed error a sidecar asks again at once, without asking trust-control to hold the
// request (then backs off while errors continue): a held request after an outage would keep the mirror
// stale for the whole hold (up to 10 s) once trust-control is back. The fault is real: trust-control's
// PostgreSQL stops, so its feed answers 503, then starts again. A recording proxy between the sidecar
// and trust-control shows what the sidecar asked after each answer.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { postgresSkipReason, startPostgres } from '@gate/trust/testing'
import { FLEET_TOKEN, fleetHealth, startFleetSidecar, waitUntil } from '../testing/fleet.js'
import { startRecordingProxy, type RecordedExchange } from '../testing/recording-proxy.js'
import { spawnGate } from '../testing/spawn-gate.js'

const skip = postgresSkipReason()
const isFeed = (e: RecordedExchange) => e.method === 'GET' && e.path.startsWith('/v1/revocations?')
const isHeld = (e: RecordedExchange) => /[?&]waitMs=[1-9]/.test(e.path)

t.test('after a feed error the next feed request is answered at once, so the mirror is fresh as soon as trust-control is', { skip }, async t => {
  const dir = t.testdir()
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_feed_recovery')
  mkdirSync(join(dir, 'control'))
  writeFileSync(join(dir, 'control', 'token'), `${FLEET_TOKEN}\n`, { mode: 0o600 })
  const control = await spawnGate(['trust', 'serve', '--listen', '127.0.0.1:0', '--database-url', url, '--service-token-file', join(dir, 'control', 'token'), '--checkpoint-every', '0'], {
    env: { GATE_CONTROL_TOKEN: '' },
  })
  t.teardown(() => control.stop('SIGKILL'))
  const proxy = await startRecordingProxy(control.url)
  t.teardown(() => proxy.close())
  // a 30 s bound: the feed is held 10 s at a time while nothing happens
  const sidecar = await startFleetSidecar(t, dir, 1, proxy.url, ['--max-revocation-staleness', '30'])
  await proxy.waitFor(e => isFeed(e) && e.status === 200 && isHeld(e))

  await server.stop()
  const failed = await proxy.waitFor(e => isFeed(e) && e.status !== 200)
  const failedAt = proxy.log.indexOf(failed)
  await server.start()
  await waitUntil('the mirror has an answer again', async () => {
    const health = await fleetHealth(sidecar.url)
    return health.revocations.stale === false && health.revocations.last_error === null
  })

  const after = proxy.log.slice(failedAt + 1).filter(isFeed)
  const firstOk = after.findIndex(e => e.status === 200)
  t.ok(firstOk >= 0, 'the feed answered again')
  t.same(
    after.slice(0, firstOk + 1).filter(isHeld).map(e => e.path),
    [],
    `every feed request from the first error up to the first answer asks for no hold (${after.slice(0, firstOk + 1).map(e => `${e.status} ${e.path}`).join(', ')})`,
  )
  await proxy.waitFor(e => isFeed(e) && e.status === 200 && isHeld(e) && proxy.log.indexOf(e) > failedAt)
  t.pass('once answered, the mirror goes back to held requests')
})
