// Store files are 0600 (issue 24, item 6): every store the real `gate sidecar` opens, with its -wal and
// -shm, after a capability was issued (the capabilities file holds bearer tokens); a file left 0644 by
// an older version is narrowed at open; a foreign file is refused with its mode untouched.
import t from 'tap'
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSigner, generateSecret, publicKeyFor } from '@gate/sdk'
import { gateFiles } from '../testing/gate-files.js'
import { spawnGate } from '../testing/spawn-gate.js'
import { call } from '../testing/http-client.js'
import { closeSqliteStores, openSqliteStores } from './sqlite-stores.js'
import { openCapabilityStore } from './capability-store.js'
import { STORE_NAMES } from './store-paths.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'
const TOKEN = 'file-mode-control-token-0123456789'

t.test('the real gate sidecar creates every store file 0600 (umask 022 would give 0644)', async t => {
  const { dir, spec, seed, db } = await gateFiles(t)
  const gate = await spawnGate(['sidecar', '--listen', '127.0.0.1:0', '--spec', spec, '--receipt-store', db, '--authority-seed-file', seed], { env: { GATE_CONTROL_TOKEN: TOKEN } })
  t.teardown(() => gate.stop('SIGKILL'))
  const issued = await call(`${gate.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: createSigner({ secret: generateSecret() }).publicKey, scope: { grants: [{ server_id: 'http', tool_name: '*' }] }, ttlSeconds: 60 },
    headers: { authorization: `Bearer ${TOKEN}` },
  })
  t.equal(issued.status, 200, 'a token was issued (and stored)')
  const files = readdirSync(dir).filter(f => f.startsWith('receipts'))
  for (const name of STORE_NAMES) {
    const file = name === 'receipts' ? 'receipts.db' : `receipts.${name}.db`
    t.ok(files.includes(file), `${file} exists`)
  }
  t.ok(files.some(f => f.endsWith('-wal')) && files.some(f => f.endsWith('-shm')), 'with WAL files beside them')
  for (const file of files) t.equal(statSync(join(dir, file)).mode & 0o777, 0o600, `${file} is 0600`)
})

t.test('a store file left readable by an older version is narrowed to 0600 with its WAL files', async t => {
  const dir = t.testdir()
  const receiptDb = join(dir, 'receipts.db')
  const stores = await openSqliteStores({ receiptDb, driver, derivePublicKey: s => publicKeyFor(s) })
  await closeSqliteStores(stores)
  const capabilities = join(dir, 'receipts.capabilities.db')
  const { chmodSync } = await import('node:fs')
  chmodSync(capabilities, 0o644)
  const store = await openCapabilityStore(capabilities, { driver })
  t.teardown(() => store.close())
  t.equal(statSync(capabilities).mode & 0o777, 0o600)
  for (const suffix of ['-wal', '-shm']) t.equal(statSync(`${capabilities}${suffix}`).mode & 0o777, 0o600, suffix)
})

t.test('a foreign file is refused and keeps its mode', async t => {
  const path = join(t.testdir(), 'receipts.capabilities.db')
  writeFileSync(path, 'not a database\n'.repeat(100), { mode: 0o644 })
  await t.rejects(openCapabilityStore(path, { driver }), { code: 'gate_store_failed' })
  t.equal(statSync(path).mode & 0o777, 0o644)
})
