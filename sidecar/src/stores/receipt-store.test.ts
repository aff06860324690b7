// Opening the receipt store: options checked at open, query indexes only on request.
import t from 'tap'
import { join } from 'node:path'
import { openReceiptStore } from './receipt-store.js'
import { openDatabase } from './sqlite-driver.js'
import { openTestReceiptStore, STORE_DRIVER } from '../testing/receipt-rows.js'

const driver = STORE_DRIVER

const open = openTestReceiptStore

t.test('query indexes are created only on request', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await open(t, path)
  const indexNames = async (): Promise<string[]> => {
    const db = await openDatabase(path, { driver })
    const names = (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")).map(r => r.name)
    await db.close()
    return names
  }
  t.same(await indexNames(), ['receipts_by_id'])
  await store.createQueryIndexes()
  await store.createQueryIndexes()
  t.same(await indexNames(), ['receipts_by_capability', 'receipts_by_id', 'receipts_by_subject', 'receipts_by_tenant', 'receipts_by_timestamp', 'receipts_by_tool'])
})

t.test('unknown options are refused at open', async t => {
  await t.rejects(openReceiptStore(':memory:', { batchSize: 10 } as never), { code: 'gate_invalid_config', message: /receipt store options\.batchSize/ })
  await t.rejects(openReceiptStore(':memory:', { queryIndexes: 'yes' } as never), { code: 'gate_invalid_config', message: /queryIndexes must be a boolean/ })
})
