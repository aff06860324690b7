import t from 'tap'
import { join } from 'node:path'
import { signCapability } from '@gate/sdk'
import { exampleSigner } from '@gate/sdk/testing'
import { openCapabilityStore } from './capability-store.js'

const issuer = exampleSigner('ed25519', 5)
const token = (id: string, subject = 'ab'.repeat(32)) =>
  signCapability({ id, subject, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, issued_at: 1, expires_at: 2 }, issuer)

t.test('remembered tokens come back byte-identical, durably, and ids are unique', async t => {
  const path = join(t.testdir(), 'receipts.capabilities.db')
  const store = await openCapabilityStore(path)
  const a = token('cap-a')
  await store.remember(a)
  await t.rejects(store.remember(a), { code: 'gate_store_failed' }, 'same id twice')
  t.same(await store.get('cap-a'), a)
  t.equal(await store.get('cap-missing'), undefined)
  await store.close()
  const again = await openCapabilityStore(path)
  t.teardown(() => again.close())
  t.equal(JSON.stringify(await again.get('cap-a')), JSON.stringify(a))
})

t.test('subject lineage lookups', async t => {
  const store = await openCapabilityStore(':memory:')
  t.teardown(() => store.close())
  await store.remember(token('c1', '11'.repeat(32)))
  await store.remember(token('c2', '11'.repeat(32)))
  await store.remember(token('c3', '22'.repeat(32)))
  t.same((await store.idsForSubject('11'.repeat(32))).sort(), ['c1', 'c2'])
  const subjects = await store.subjectsOf(['c1', 'c3', 'nope'])
  t.same([...subjects].sort(), [['c1', '11'.repeat(32)], ['c3', '22'.repeat(32)]])
})

t.test('a receipts file is refused as a capability store', async t => {
  const { openReceiptStore } = await import('./receipt-store.js')
  const path = join(t.testdir(), 'r.db')
  await (await openReceiptStore(path)).close()
  await t.rejects(openCapabilityStore(path), { code: 'gate_store_failed' })
})
