// Opening the receipt store: options checked at open, query indexes only on request.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { openReceiptStore, type ReceiptRow, type ReceiptStore } from './receipt-store.js'
import { openDatabase } from './sqlite-driver.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

function receiptId(): string {
  return randomBytes(32).toString('hex')
}

function row(overrides: Partial<ReceiptRow> = {}): ReceiptRow {
  const id = overrides.receiptId ?? receiptId()
  return {
    receiptId: id,
    timestamp: 1_700_000_000,
    requestId: `req-${id.slice(0, 8)}`,
    method: 'POST',
    routePattern: '/pets/{id}',
    toolServer: 'http',
    toolName: 'POST /pets/{id}',
    outcome: 'allow',
    kind: 'decision',
    httpJson: JSON.stringify({ id, verdict: { verdict: 'allow' } }),
    ...overrides,
  }
}

async function open(t: Test, path: string, options: Parameters<typeof openReceiptStore>[1] = {}): Promise<ReceiptStore> {
  const store = await openReceiptStore(path, { driver, ...options })
  t.teardown(() => store.close())
  return store
}

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
