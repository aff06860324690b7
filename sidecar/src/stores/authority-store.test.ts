// The authority store: a 0600 file holding the signing seed, rotation with a kept public-key history.
import t from 'tap'
import { createHash } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openAuthorityStore } from './authority-store.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

// Stands in for the signer's derivation: deterministic, and distinct per seed.
const derivePublicKey = (seed: Uint8Array): string => createHash('sha256').update(seed).digest('hex')
const seed = (byte: number): Uint8Array => new Uint8Array(32).fill(byte)

t.test('the file and its WAL are created 0600; a fresh store has no key until ensureKey', async t => {
  const path = join(t.testdir(), 'authority.db')
  const store = await openAuthorityStore(path, { driver, derivePublicKey, now: () => 100 })
  t.teardown(() => store.close())
  t.equal(statSync(path).mode & 0o777, 0o600)
  t.equal(store.current(), undefined)
  t.same(store.trustedPublicKeys(), [])
  const first = await store.ensureKey(() => seed(1))
  t.same(first, { seed: seed(1), publicKey: derivePublicKey(seed(1)), generation: 1, rotatedAt: 100 })
  t.equal(statSync(`${path}-wal`).mode & 0o777, 0o600)
  t.same(await store.ensureKey(() => seed(9)), first, 'ensureKey keeps an existing key')
})

t.test('an existing file with a looser mode is tightened to 0600', async t => {
  const path = join(t.testdir(), 'authority.db')
  writeFileSync(path, '', { mode: 0o644 })
  const store = await openAuthorityStore(path, { driver, derivePublicKey })
  t.teardown(() => store.close())
  t.equal(statSync(path).mode & 0o777, 0o600)
  t.equal(statSync(`${path}-wal`).mode & 0o777, 0o600)
})

t.test('a foreign file is refused with its mode left alone', async t => {
  const path = join(t.testdir(), 'authority.db')
  writeFileSync(path, 'not a database\n'.repeat(100), { mode: 0o644 })
  await t.rejects(openAuthorityStore(path, { driver, derivePublicKey }), { code: 'gate_store_failed', name: 'StoreRevisionError' })
  t.equal(statSync(path).mode & 0o777, 0o644)
})

t.test('rotate advances the generation, keeps every public key trusted, and survives reopen', async t => {
  const path = join(t.testdir(), 'authority.db')
  let clock = 1000
  const store = await openAuthorityStore(path, { driver, derivePublicKey, now: () => clock })
  await store.rotate(seed(1))
  clock = 2000
  const second = await store.rotate(seed(2))
  t.same(second, { seed: seed(2), publicKey: derivePublicKey(seed(2)), generation: 2, rotatedAt: 2000 })
  t.same(store.trustedPublicKeys(), [derivePublicKey(seed(1)), derivePublicKey(seed(2))])
  await t.rejects(store.rotate(seed(1)), { code: 'gate_bad_request', message: /a key not used by an earlier generation/ })
  await store.close()

  const reopened = await openAuthorityStore(path, { driver, derivePublicKey })
  t.teardown(() => reopened.close())
  t.same(reopened.current(), second)
  t.same(reopened.trustedPublicKeys(), [derivePublicKey(seed(1)), derivePublicKey(seed(2))])
})

t.test('a retired seed is wiped from the file', async t => {
  const path = join(t.testdir(), 'authority.db')
  const store = await openAuthorityStore(path, { driver, derivePublicKey })
  await store.rotate(seed(0xab))
  await store.rotate(seed(0xcd))
  await store.close()
  const { openDatabase } = await import('./sqlite-driver.js')
  const db = await openDatabase(path, { driver })
  t.teardown(() => db.close())
  const rows = await db.all<{ generation: number; seed: Uint8Array | null }>('SELECT generation, seed FROM authority_keys ORDER BY generation')
  t.same(rows.map(r => [r.generation, r.seed === null]), [[1, true], [2, false]])
  const bytes = readFileSync(path)
  t.equal(bytes.indexOf(Buffer.from(seed(0xab))), -1, 'the old seed bytes are gone from the file')
  t.not(bytes.indexOf(Buffer.from(seed(0xcd))), -1, 'the current seed is there')
})

t.test('current() hands out a copy of the seed', async t => {
  const store = await openAuthorityStore(':memory:', { driver, derivePublicKey })
  t.teardown(() => store.close())
  await store.rotate(seed(5))
  store.current()!.seed.fill(0)
  t.same(store.current()!.seed, seed(5))
})

t.test('a seed that is not 32 bytes, or a missing derivePublicKey, is refused', async t => {
  const store = await openAuthorityStore(':memory:', { driver, derivePublicKey })
  t.teardown(() => store.close())
  await t.rejects(store.rotate(new Uint8Array(31)), { code: 'gate_bad_request', message: /seed must be a signing key \(a 32-byte Ed25519 seed, or a key file line of another algorithm\), got 31 bytes/ })
  await t.rejects(openAuthorityStore(':memory:', { driver } as never), { code: 'gate_invalid_config', message: /derivePublicKey must be a function/ })
})
