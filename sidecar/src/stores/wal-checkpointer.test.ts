// The WAL checkpoint thread, on real files with the driver under test (GATE_STORE_DRIVER): it copies
// committed pages into the database file off the writer's thread, the store closes with it cleanly,
// and nothing committed is lost whether it runs or not.
import t from 'tap'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { openReceiptStore } from './receipt-store.js'
import { receiptRow } from '../testing/receipt-rows.js'
import { createWalCheckpointer } from './wal-checkpointer.js'

const driver = (process.env['GATE_STORE_DRIVER'] ?? 'sqlite3') as 'sqlite3' | 'node:sqlite'

const row = (n: number) => receiptRow(n)

async function appendRows(store: Awaited<ReturnType<typeof openReceiptStore>>, count: number, from = 0): Promise<string[]> {
  const rows = Array.from({ length: count }, (_, i) => row(from + i))
  await Promise.all(rows.map(r => store.log.append(r)))
  return rows.map(r => r.receiptId)
}

const until = async (what: string, ok: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

t.test('commits are checkpointed into the database file by the thread, and survive a reopen', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openReceiptStore(path, { driver })
  t.same(store.checkpointStats, { runs: 0, busy: 0, walFrames: 0, framesCopied: 0 }, 'a file-backed store has a checkpointer (its thread starts with the first commit)')
  const sizeBefore = statSync(path).size
  const ids = await appendRows(store, 400)
  await until('a checkpoint run', () => (store.checkpointStats?.runs ?? 0) > 0)
  const stats = store.checkpointStats!
  t.ok(stats.framesCopied > 0, `pages copied into the database file (${stats.framesCopied} of ${stats.walFrames})`)
  t.ok(statSync(path).size > sizeBefore, 'the database file grew without the writer checkpointing')
  // more commits after a run ask for another one
  const more = await appendRows(store, 100, 400)
  await until('a second run', () => (store.checkpointStats?.runs ?? 0) > stats.runs)
  await store.close()

  const again = await openReceiptStore(path, { driver, backgroundCheckpoints: false })
  t.teardown(() => again.close())
  t.equal(again.checkpointStats, undefined, 'switched off: no thread')
  for (const id of [ids[0]!, ids[399]!, more[99]!]) t.ok(await again.query.getById(id), `receipt ${id.slice(0, 8)} is stored`)
})

t.test('an in-memory store has no checkpoint thread; a bad option is refused by name', async t => {
  const store = await openReceiptStore(':memory:', { driver })
  t.teardown(() => store.close())
  t.equal(store.checkpointStats, undefined)
  await t.rejects(openReceiptStore(join(t.testdir(), 'r.db'), { driver, backgroundCheckpoints: 'yes' as unknown as boolean }), /backgroundCheckpoints/)
})

t.test('a thread that cannot open its file is reported through onError at its first run, naming the file', async t => {
  const missing = join(t.testdir(), 'no-such-dir', 'receipts.db')
  const errors: Error[] = []
  const checkpointer = createWalCheckpointer(missing, { driver }, { intervalMs: 10, onError: err => errors.push(err) })
  t.teardown(() => checkpointer.close())
  checkpointer.notify()
  await until('the error', () => errors.length > 0)
  t.match(errors[0]!.message, /the WAL checkpoint thread could not open .*no-such-dir/)
  checkpointer.notify()
  t.equal(checkpointer.stats.runs, 0, 'no run after it failed')
  await checkpointer.close()
  checkpointer.releaseFile()
})

t.test('a store that is only read never starts the thread', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const writer = await openReceiptStore(path, { driver })
  const [id] = await appendRows(writer, 1)
  await writer.close()
  const reader = await openReceiptStore(path, { driver })
  t.teardown(() => reader.close())
  t.ok(await reader.query.getById(id!))
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(reader.checkpointStats?.runs, 0, 'no commit, no checkpoint')
})

t.test('closing right after commits waits for a run in flight and leaves nothing running', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openReceiptStore(path, { driver })
  await appendRows(store, 200)
  // close while a run is scheduled (and possibly in flight): it must settle, not hang or throw
  await store.close()
  await t.rejects(store.log.append(row(1)), /closed|persist/i, 'appends after close are refused')
  const reopened = await openReceiptStore(path, { driver })
  t.teardown(() => reopened.close())
  t.equal((await reopened.query.queryPage({}, 500)).length, 200, 'all 200 receipts are there')
})
