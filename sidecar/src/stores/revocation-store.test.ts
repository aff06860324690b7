// The revocation store: durable revocations, a synchronous in-memory membership test kept in sync.
import t from 'tap'
import { join } from 'node:path'
import { openRevocationStore } from './revocation-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

t.test('revoke commits, isRevoked answers at once, and a second revoke is not new', async t => {
  let clock = 1_700_000_000
  const store = await openRevocationStore(join(t.testdir(), 'revocations.db'), { driver, now: () => clock })
  t.teardown(() => store.close())
  t.equal(store.isRevoked('cap-1'), false)
  t.same(await store.revoke('cap-1'), { revoked: true, newlyRevoked: true })
  t.equal(store.isRevoked('cap-1'), true)
  clock += 10
  t.same(await store.revoke('cap-1'), { revoked: true, newlyRevoked: false })
  t.same(await store.revoke('cap-2'), { revoked: true, newlyRevoked: true })
  t.same(await store.list(), [
    { seq: 1, capabilityId: 'cap-1', revokedAt: 1_700_000_000 },
    { seq: 2, capabilityId: 'cap-2', revokedAt: 1_700_000_010 },
  ])
  t.equal(store.size, 2)
})

t.test('revocations are loaded into memory when the file is reopened', async t => {
  const path = join(t.testdir(), 'revocations.db')
  const first = await openRevocationStore(path, { driver })
  await Promise.all(['a', 'b', 'c'].map(id => first.revoke(id)))
  await first.close()
  const second = await openRevocationStore(path, { driver })
  t.teardown(() => second.close())
  t.equal(second.isEphemeral, false)
  t.same(['a', 'b', 'c', 'd'].map(id => second.isRevoked(id)), [true, true, true, false])
})

t.test('an empty capability id is refused with gate_bad_request', async t => {
  const store = await openRevocationStore(':memory:', { driver })
  t.teardown(() => store.close())
  t.equal(store.isEphemeral, true)
  await t.rejects(store.revoke(''), { code: 'gate_bad_request', message: /capabilityId must be a non-empty string/ })
})

t.test('a revocation that cannot be committed fails with gate_store_failed but still denies in this process', async t => {
  const store = await openRevocationStore(join(t.testdir(), 'revocations.db'), { driver })
  await store.close()
  await t.rejects(store.revoke('cap-x'), { code: 'gate_store_failed' })
  t.equal(store.isRevoked('cap-x'), true, 'fail closed')
})

t.test('refresh picks up what another connection revoked, and every caller asking meanwhile sees it', async t => {
  const path = join(t.testdir(), 'revocations.db')
  const sidecar = await openRevocationStore(path, { driver })
  const trust = await openRevocationStore(path, { driver })
  t.teardown(async () => {
    await sidecar.close()
    await trust.close()
  })
  await sidecar.refresh()
  await trust.revoke('cap-elsewhere')
  t.equal(sidecar.isRevoked('cap-elsewhere'), false, 'not before a refresh')
  // many concurrent askers: one check running, one queued behind it, all resolve after the commit is seen
  await Promise.all(Array.from({ length: 20 }, () => sidecar.refresh()))
  t.equal(sidecar.isRevoked('cap-elsewhere'), true)
  await sidecar.revoke('cap-here')
  await trust.revoke('cap-later')
  await sidecar.refresh()
  t.equal(sidecar.isRevoked('cap-later'), true, 'rows past the last seq seen, own ones in between')
  t.equal(sidecar.size, 3)
})
