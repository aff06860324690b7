// The capability lineage contract (store-ports.ts TrustCapabilityStore), kept by the SQLite capability
// store (@gate/sidecar) and PgCapabilityStore: issued tokens by id and by agent subject.
import type { Test } from 'tap'
import type { CapabilityToken } from '@gate/sdk'
import type { TrustCapabilityStore } from '../../store-ports.js'
import type { OpenStore } from './store-factory.js'

const token = (id: string, subject: string): CapabilityToken => ({
  schema: 'gate.capability.v1',
  id,
  issuer: 'ab'.repeat(32),
  subject,
  scope: { grants: [{ server_id: 'http', tool_name: 'GET /pets' }] },
  issued_at: 1_700_000_000,
  expires_at: 1_700_003_600,
  signature: 'cd'.repeat(64),
})

export function testCapabilityStoreContract(t: Test, open: OpenStore<TrustCapabilityStore>): void {
  t.test('capability store: issued tokens read back by id and by subject; an id is recorded once', async t => {
    const store = await open(t)
    await store.remember(token('cap_1', 's1'))
    await store.remember(token('cap_2', 's1'))
    await store.remember(token('cap_3', 's2'))
    t.same(await store.get('cap_2'), token('cap_2', 's1'), 'as issued')
    t.equal(await store.get('cap_9'), undefined)
    t.same((await store.idsForSubject('s1')).sort(), ['cap_1', 'cap_2'])
    t.same(await store.idsForSubject('s9'), [])
    t.same(await store.subjectsOf(['cap_1', 'cap_3', 'cap_9']), new Map([['cap_1', 's1'], ['cap_3', 's2']]))
    t.same(await store.subjectsOf([]), new Map())
    await t.rejects(store.remember(token('cap_1', 's3')), 'a second token under a recorded id is refused')
    t.same(await store.get('cap_1'), token('cap_1', 's1'), 'the first stays')
    await t.rejects(store.remember({ ...token('', 's1') }), { code: 'gate_bad_request' })
  })
}
