// A revocation committed through one node's stores is heard by another's listener (LISTEN/NOTIFY, on
// commit); a lost listen connection comes back by itself and says so (a notification may have been
// missed), and hears the next one. Real PostgreSQL.
import t from 'tap'
import { EventEmitter, once } from 'node:events'
import { createSigner } from '@gate/sdk'
import { postgresSkipReason, startPostgres } from '../testing/postgres-server.js'
import { openPgStores } from './pg-stores.js'

const skip = postgresSkipReason()

t.test("another node's revocation reaches the watcher at commit; a killed listen connection reconnects and hears the next", { skip }, async t => {
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  const url = await server.createDatabase('gate_notify')
  const open = () => openPgStores({ url, derivePublicKey: s => createSigner({ secret: s }).publicKey, applicationName: 'gate-notify-test' })
  const [a, b] = [await open(), await open()]
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const heard = new EventEmitter()
  const unwatch = a.revocations.watch?.(() => heard.emit('look'))
  t.ok(unwatch, 'the PostgreSQL revocation store can be watched')

  let look = once(heard, 'look')
  t.same(await b.revocations.revoke('cap-notify-1'), { revoked: true, newlyRevoked: true })
  await look
  t.same((await a.revocations.listAfter(0, 10)).map(r => r.capabilityId), ['cap-notify-1'], 'the row is there when the watcher hears')

  // the server ends a's listen connection (a failover, an idle-session kill)
  look = once(heard, 'look')
  const ended = await a.db.get<{ n: number }>("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'gate-notify-test-listen' AND query LIKE 'LISTEN%'")
  t.ok((ended?.n ?? 0) >= 1, 'a listen connection was ended')
  await look
  look = once(heard, 'look')
  await b.revocations.revoke('cap-notify-2')
  await look
  t.same((await a.revocations.listAfter(1, 10)).map(r => r.capabilityId), ['cap-notify-2'])
  unwatch?.()
})
