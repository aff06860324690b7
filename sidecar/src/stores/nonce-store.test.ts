// The nonce store: single use, bound to the request, expiring, atomic under concurrency.
import t from 'tap'
import { join } from 'node:path'
import type { RequestBindings } from '@gate/trust'
import { openNonceStore, type NewNonce } from './nonce-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const NOW = 1_700_000_000
const bindings: RequestBindings = { callerIdentityHash: 'a'.repeat(64), method: 'POST', routePattern: '/orders', contentHash: 'c'.repeat(64) }

function nonce(id: string, overrides: Partial<NewNonce> = {}): NewNonce {
  return { nonceId: id, requestId: `req-${id}`, ...bindings, expiresAt: NOW + 60, ...overrides }
}

t.test('a nonce is consumed once; the second use is "used"', async t => {
  const store = await openNonceStore(join(t.testdir(), 'nonces.db'), { driver })
  t.teardown(() => store.close())
  await store.issue(nonce('n1'))
  t.same(await store.consume('n1', bindings, NOW), { ok: true, requestId: 'req-n1' })
  t.same(await store.consume('n1', bindings, NOW), { ok: false, reason: 'used' })
})

t.test('unknown, expired and mismatched nonces are refused with their reason, without being burnt', async t => {
  const store = await openNonceStore(join(t.testdir(), 'nonces.db'), { driver })
  t.teardown(() => store.close())
  await store.issue(nonce('n1'))
  t.same(await store.consume('missing', bindings, NOW), { ok: false, reason: 'unknown' })
  t.same(await store.consume('', bindings, NOW), { ok: false, reason: 'unknown' })
  t.same(await store.consume('n1', { ...bindings, contentHash: 'd'.repeat(64) }, NOW), { ok: false, reason: 'mismatch' })
  t.same(await store.consume('n1', { ...bindings, method: 'PUT' }, NOW), { ok: false, reason: 'mismatch' })
  t.same(await store.consume('n1', { ...bindings, callerIdentityHash: 'b'.repeat(64) }, NOW), { ok: false, reason: 'mismatch' })
  t.same(await store.consume('n1', { ...bindings, routePattern: '/x' }, NOW), { ok: false, reason: 'mismatch' })
  t.same(await store.consume('n1', bindings, NOW + 60), { ok: false, reason: 'expired' }, 'expired from expiresAt on')
  t.same(await store.consume('n1', bindings, NOW + 59), { ok: true, requestId: 'req-n1' }, 'the refusals did not burn it')
})

t.test('of 50 concurrent consumers exactly one succeeds, also across two stores on one file', async t => {
  const path = join(t.testdir(), 'nonces.db')
  const a = await openNonceStore(path, { driver })
  const b = await openNonceStore(path, { driver })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  await a.issue(nonce('n1'))
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).consume('n1', bindings, NOW)))
  t.equal(results.filter(r => r.ok).length, 1)
  t.ok(results.filter(r => !r.ok).every(r => !r.ok && r.reason === 'used'))
})

t.test('issued and used nonces survive a reopen', async t => {
  const path = join(t.testdir(), 'nonces.db')
  const first = await openNonceStore(path, { driver })
  await Promise.all([first.issue(nonce('n1')), first.issue(nonce('n2'))])
  t.same(await first.consume('n1', bindings, NOW), { ok: true, requestId: 'req-n1' })
  await first.close()
  const second = await openNonceStore(path, { driver })
  t.teardown(() => second.close())
  t.same(await second.consume('n1', bindings, NOW), { ok: false, reason: 'used' })
  t.same(await second.consume('n2', bindings, NOW), { ok: true, requestId: 'req-n2' })
})

t.test('a taken nonce id is gate_conflict; bad nonces are gate_bad_request', async t => {
  const store = await openNonceStore(':memory:', { driver })
  t.teardown(() => store.close())
  await store.issue(nonce('n1'))
  await t.rejects(store.issue(nonce('n1')), { code: 'gate_conflict', name: 'DuplicateRecordError' })
  await t.rejects(store.issue(nonce('n2', { method: '' })), { code: 'gate_bad_request', message: /method/ })
  await t.rejects(store.issue(nonce('n3', { expiresAt: 1.5 })), { code: 'gate_bad_request', message: /expiresAt/ })
  t.equal(store.healthy, true)
})

t.test('deleteExpired removes nonces past their expiry', async t => {
  const store = await openNonceStore(':memory:', { driver, now: () => NOW + 1000 })
  t.teardown(() => store.close())
  await store.issue(nonce('old', { expiresAt: NOW }))
  await store.issue(nonce('fresh', { expiresAt: NOW + 2000 }))
  t.equal(await store.deleteExpired(), 1)
  t.same(await store.consume('old', bindings, NOW - 10), { ok: false, reason: 'unknown' })
  t.same(await store.consume('fresh', bindings, NOW + 1000), { ok: true, requestId: 'req-fresh' })
})
