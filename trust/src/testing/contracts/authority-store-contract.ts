// The authority key contract (store-ports.ts TrustAuthorityStore), kept by the SQLite authority store
// (@gate/sidecar) and PgAuthorityStore, over two handles on one store (two processes on one file, two
// nodes on one database): the first key is created once, a rotation keeps every earlier key trusted and
// is seen by the other handle after a reload, and a retired key never becomes current again.
import type { Test } from 'tap'
import { generateSigningKey, signingKeyBytes } from '@gate/sdk'
import type { TrustAuthorityStore } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const seed = (n: number) => new Uint8Array(32).fill(n)

export function testAuthorityStoreContract(t: Test, open: OpenStore<[TrustAuthorityStore, TrustAuthorityStore]>, derivePublicKey: (seed: Uint8Array) => string): void {
  t.test('authority store: the first key is made once; rotations keep earlier keys trusted, across handles', async t => {
    const [a, b] = await open(t)
    t.equal(a.current(), undefined)
    t.same(a.trustedPublicKeys(), [])
    const first = await a.ensureKey(() => seed(1))
    t.match(first, { publicKey: derivePublicKey(seed(1)), generation: 1 })
    t.same(first.seed, seed(1))
    t.same((await a.ensureKey(() => seed(9))).publicKey, first.publicKey, 'ensureKey keeps a key that exists')
    await b.reload()
    t.same(b.current()?.publicKey, first.publicKey, 'the other handle reads the same key')
    const second = await b.rotate(seed(2))
    t.match(second, { publicKey: derivePublicKey(seed(2)), generation: 2 })
    t.same(b.trustedPublicKeys(), [derivePublicKey(seed(1)), derivePublicKey(seed(2))], 'oldest first')
    await a.reload()
    t.match(a.current(), { generation: 2, publicKey: second.publicKey }, 'a reload sees the rotation')
    t.same(a.trustedPublicKeys(), b.trustedPublicKeys())
  })

  // a hybrid key is ~4,000 characters: PostgreSQL keeps keys unique by their hash (migration 5)
  t.test('authority store: a rotation to a hybrid key, and back to Ed25519', async t => {
    const [a, b] = await open(t)
    await a.ensureKey(() => seed(1))
    const hybrid = signingKeyBytes(generateSigningKey('ed25519+mldsa65'))
    const second = await a.rotate(hybrid)
    t.match(second, { publicKey: derivePublicKey(hybrid), generation: 2 })
    t.match(second.publicKey, /^hybrid:/)
    await b.reload()
    t.same(b.current()?.seed, hybrid, 'the other handle reads the hybrid key whole')
    await b.rotate(seed(3))
    await a.reload()
    t.same(a.trustedPublicKeys(), [derivePublicKey(seed(1)), second.publicKey, derivePublicKey(seed(3))])
    await t.rejects(a.rotate(hybrid), { code: 'gate_bad_request' }, 'the retired hybrid key')
  })

  t.test('authority store: a retired key or a malformed seed is refused', async t => {
    const [a] = await open(t)
    await a.ensureKey(() => seed(1))
    await a.rotate(seed(2))
    await t.rejects(a.rotate(seed(1)), { code: 'gate_bad_request' }, 'a key an earlier generation used')
    await t.rejects(a.rotate(new Uint8Array(31)), { code: 'gate_bad_request' })
    t.equal(a.current()?.generation, 2)
  })
}
