// The store contract suites (@gate/trust's testing/contracts, @gate/mcp's edge sessions) against the
// SQLite stores, on the driver GATE_STORE_DRIVER names (node-sqlite-driver.test.ts runs this file again
// on node:sqlite under Node 24). The PostgreSQL stores run the same suites in @gate/trust
// (postgres/pg-store-contracts.test.ts). Stores shared between handles are two connections to one file.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { publicKeyOfKeyBytes } from '@gate/sdk'
import { testEdgeSessionStoreContract } from '@gate/mcp/testing'
import {
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
} from '@gate/trust/testing'
import { STORE_DRIVER as driver } from '../testing/receipt-rows.js'
import { openApprovalStore } from './approval-store.js'
import { openAuthorityStore } from './authority-store.js'
import { openBudgetStore } from './budget-store.js'
import { openCapabilityStore } from './capability-store.js'
import { openEdgeSessionStore } from './edge-session-store.js'
import { openEnrolledKeyStore } from './enrolled-key-store.js'
import { openReceiptStore } from './receipt-store.js'
import { openRevocationStore } from './revocation-store.js'
import { openTransparencyLogStore } from './transparency-log-store.js'

const derivePublicKey = publicKeyOfKeyBytes

/** Opens `open(path)` on a fresh file in the test's directory, closed when the test ends. */
function fresh<S extends { close(): Promise<void> }>(name: string, open: (path: string) => Promise<S>) {
  return async (t: Test): Promise<S> => {
    const store = await open(join(t.testdir(), name))
    t.teardown(() => store.close())
    return store
  }
}

/** Two stores on one fresh file. */
function twoOnOneFile<S extends { close(): Promise<void> }>(name: string, open: (path: string) => Promise<S>) {
  return async (t: Test): Promise<[S, S]> => {
    const path = join(t.testdir(), name)
    const a = await open(path)
    const b = await open(path)
    t.teardown(async () => {
      await a.close()
      await b.close()
    })
    return [a, b]
  }
}

const receipts = fresh('receipts.db', path => openReceiptStore(path, { driver }))

t.test(`receipt log (${driver})`, async t => testReceiptLogContract(t, receipts))
t.test(`receipt query (${driver})`, async t => testReceiptQueryContract(t, receipts))
t.test(`listed receipts (${driver})`, async t => testListedReceiptStoreContract(t, receipts))
t.test(`revocations (${driver})`, async t => testRevocationStoreContract(t, fresh('revocations.db', path => openRevocationStore(path, { driver }))))
t.test(`budgets, two connections (${driver})`, async t => testBudgetStoreContract(t, twoOnOneFile('budgets.db', path => openBudgetStore(path, { driver }))))
t.test(`capabilities (${driver})`, async t => testCapabilityStoreContract(t, fresh('capabilities.db', path => openCapabilityStore(path, { driver }))))
t.test(`enrolled keys (${driver})`, async t => testEnrolledKeyStoreContract(t, fresh('capabilities.db', path => openEnrolledKeyStore(path, { driver, now: () => 1_700_000_000 }))))
t.test(`authority, two connections (${driver})`, async t =>
  testAuthorityStoreContract(t, twoOnOneFile('authority.db', path => openAuthorityStore(path, { driver, derivePublicKey })), derivePublicKey),
)
t.test(`approvals (${driver})`, async t => testApprovalStoreContract(t, fresh('approvals.db', path => openApprovalStore(path, { driver, now: () => 1_700_000_000 }))))
t.test(`transparency log (${driver})`, async t =>
  testTransparencyLogStoreContract(t, async t => {
    // the log's tables live in the receipt file (t.testdir() is called once: a second call empties it)
    const path = join(t.testdir(), 'receipts.db')
    const store = await openReceiptStore(path, { driver })
    const backend = await openTransparencyLogStore(path, { driver })
    t.teardown(async () => {
      await backend.close()
      await store.close()
    })
    return { backend, log: store.log }
  }),
)
t.test(`edge sessions (${driver})`, async t => testEdgeSessionStoreContract(t, fresh('receipts.edge_sessions.db', path => openEdgeSessionStore(path, { driver }))))
