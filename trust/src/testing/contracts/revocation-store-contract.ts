// The revocation store contract (store-ports.ts TrustRevocationStore), kept by the SQLite store
// (@gate/sidecar) and the PostgreSQL one: a revocation is durable and idempotent, and the feed reads
// revocations in seq order past a cursor.
import type { Test } from 'tap'
import type { TrustRevocationStore } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

export function testRevocationStoreContract(t: Test, open: OpenStore<TrustRevocationStore>): void {
  t.test('revocation store: a revocation is new once, then idempotent, and seen by isRevoked', async t => {
    const store = await open(t)
    t.equal(await store.isRevoked('cap_a'), false)
    t.same(await store.revoke('cap_a'), { revoked: true, newlyRevoked: true })
    t.same(await store.revoke('cap_a'), { revoked: true, newlyRevoked: false }, 'revoking twice changes nothing')
    t.equal(await store.isRevoked('cap_a'), true)
    t.equal(await store.isRevoked('cap_b'), false)
  })

  t.test('revocation store: the feed lists revocations in seq order past a cursor', async t => {
    const store = await open(t)
    t.equal(await store.latestSeq(), 0, 'empty')
    t.same(await store.listAfter(0, 10), [])
    for (const id of ['cap_1', 'cap_2', 'cap_3', 'cap_2']) await store.revoke(id)
    const all = await store.list()
    t.same(all.map(r => r.capabilityId), ['cap_1', 'cap_2', 'cap_3'], 'each capability once, in revocation order')
    t.ok(all.every((r, i) => i === 0 || r.seq > all[i - 1]!.seq), 'seqs grow')
    t.ok(all.every(r => Number.isSafeInteger(r.revokedAt) && r.revokedAt > 0), 'revokedAt in Unix seconds')
    t.equal(await store.latestSeq(), all[2]!.seq)
    t.same(await store.listAfter(all[0]!.seq, 10), all.slice(1))
    t.same(await store.listAfter(0, 2), all.slice(0, 2), 'limit')
    t.same(await store.listAfter(all[2]!.seq, 10), [], 'nothing past the latest')
  })

  t.test('revocation store: an empty capability id is refused', async t => {
    const store = await open(t)
    await t.rejects(store.revoke(''), { code: 'gate_bad_request' })
    t.equal(await store.latestSeq(), 0)
  })
}
