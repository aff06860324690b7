// The enrolled key contract (store-ports.ts EnrolledKeyStore), kept by the SQLite table beside the
// capabilities (@gate/sidecar) and PgEnrolledKeyStore: enrolment is idempotent, a key keeps its first
// label and time, keys list oldest first, keys of every algorithm are held (a hybrid one is ~4,000
// characters), and a key or label the table would not hold is refused.
import type { Test } from 'tap'
import { createSignerFromKey, generateSigningKey } from '@gate/sdk'
import type { EnrolledKeyStore } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const KEY_A = 'a1'.repeat(32)
const KEY_B = `p256:04${'b2'.repeat(64)}`

export function testEnrolledKeyStoreContract(t: Test, open: OpenStore<EnrolledKeyStore>): void {
  t.test('enrolled keys: enrolment is idempotent and keeps the first label', async t => {
    const store = await open(t)
    const first = await store.enroll(KEY_A, 'sidecar-eu-1')
    t.match(first, { publicKey: KEY_A, label: 'sidecar-eu-1', created: true })
    t.ok(Number.isSafeInteger(first.enrolledAt) && first.enrolledAt > 0)
    t.same(await store.enroll(KEY_A, 'renamed'), { ...first, created: false })
    t.same(await store.get(KEY_A), { publicKey: KEY_A, label: 'sidecar-eu-1', enrolledAt: first.enrolledAt })
    t.equal(await store.get(KEY_B), undefined)
    await store.enroll(KEY_B, 'api protect 1')
    t.same((await store.list()).map(k => k.publicKey).sort(), [KEY_A, KEY_B].sort())
  })

  // PostgreSQL keys the rows by the key's hash: a ~4,000-character key is wider than a B-tree entry
  t.test('enrolled keys: a hybrid key is held whole', async t => {
    const store = await open(t)
    const hybrid = createSignerFromKey(generateSigningKey('p384+mldsa65')).publicKey
    t.match(await store.enroll(hybrid, 'mcp serve 1'), { publicKey: hybrid, created: true })
    t.match(await store.enroll(hybrid, 'again'), { created: false })
    t.equal((await store.get(hybrid))?.publicKey, hybrid)
  })

  t.test('enrolled keys: a key or label the table would not hold is refused', async t => {
    const store = await open(t)
    await t.rejects(store.enroll('nope', 'x'), { code: 'gate_bad_request' })
    await t.rejects(store.enroll(KEY_A.toUpperCase(), 'x'), { code: 'gate_bad_request' })
    await t.rejects(store.enroll(KEY_A, ''), { code: 'gate_bad_request' })
    await t.rejects(store.enroll(KEY_A, 'a\nb'), { code: 'gate_bad_request' })
    t.same(await store.list(), [])
  })
}
