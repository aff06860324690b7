// The store contract suites (testing/contracts/) against the PostgreSQL stores on a real server, each
// test on a database of its own; the SQLite stores run the same suites in @gate/sidecar (both drivers).
// Stores shared between handles are two nodes (two pools) on one database.
import t, { type Test } from 'tap'
import { publicKeyOfKeyBytes } from '@gate/sdk'
import {
  postgresSkipReason,
  startPostgres,
  testApprovalStoreContract,
  testAuthorityStoreContract,
  testBudgetStoreContract,
  testCapabilityStoreContract,
  testEnrolledKeyStoreContract,
  testListedReceiptStoreContract,
  testReceiptLogContract,
  testReceiptQueryContract,
  testRevocationStoreContract,
  testTransparencyLogStoreContract,
  type PostgresServer,
} from '../testing/index.js'
import { openPgStores, PgTransparencyLogStore, type PgStores } from './index.js'

const skip = postgresSkipReason()
let server!: PostgresServer
const derivePublicKey = publicKeyOfKeyBytes

t.before(async () => {
  if (skip !== undefined) return
  server = await startPostgres()
})
t.teardown(() => server?.destroy())

// `count` nodes on one fresh database, closed when the test ends (a loaded host may keep a connection
// waiting for seconds: the connect timeout is generous)
async function nodes(t: Test, count: number): Promise<PgStores[]> {
  const url = await server.createDatabase()
  const opened = await Promise.all(Array.from({ length: count }, () => openPgStores({ url, derivePublicKey, poolSize: 4, connectTimeoutMs: 60_000 })))
  t.teardown(() => Promise.all(opened.map(n => n.close())))
  return opened
}
const one = async (t: Test) => (await nodes(t, 1))[0]!

t.test('receipt log', { skip }, async t => testReceiptLogContract(t, async t => (await one(t)).receipts))
t.test('receipt query', { skip }, async t => testReceiptQueryContract(t, async t => (await one(t)).receipts))
t.test('listed receipts', { skip }, async t => testListedReceiptStoreContract(t, async t => (await one(t)).receipts))
t.test('revocations', { skip }, async t => testRevocationStoreContract(t, async t => (await one(t)).revocations))
t.test('budgets, two nodes', { skip }, async t =>
  testBudgetStoreContract(t, async t => {
    const [a, b] = await nodes(t, 2)
    return [a!.budgets, b!.budgets]
  }),
)
t.test('capabilities', { skip }, async t => testCapabilityStoreContract(t, async t => (await one(t)).capabilities))
t.test('enrolled keys', { skip }, async t => testEnrolledKeyStoreContract(t, async t => (await one(t)).enrolledKeys))
t.test('authority, two nodes', { skip }, async t =>
  testAuthorityStoreContract(
    t,
    async t => {
      const [a, b] = await nodes(t, 2)
      return [a!.authority, b!.authority]
    },
    derivePublicKey,
  ),
)
t.test('approvals', { skip }, async t => testApprovalStoreContract(t, async t => (await one(t)).approvals))
t.test('transparency log', { skip }, async t =>
  testTransparencyLogStoreContract(t, async t => {
    const stores = await one(t)
    return { backend: new PgTransparencyLogStore(stores.db), log: stores.receipts.log }
  }),
)
