// findStored over the filter of stored id prefixes: every stored id is found (across id buckets, and
// rows another connection appended after the filter was filled), no fresh id is, and the filter never
// rules out a stored prefix.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { idPrefix } from '@gate/trust'
import { ID_BUCKET_ROWS } from './receipt-log.js'
import { ReceiptIdFilter } from './receipt-id-filter.js'
import { openDatabase } from './sqlite-driver.js'
import { openTestReceiptStore, receiptRow, STORE_DRIVER } from '../testing/receipt-rows.js'

const freshIds = (n: number) => Array.from({ length: n }, () => randomBytes(32).toString('hex'))

t.test('findStored finds every stored id and no fresh one, also rows appended by another connection', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openTestReceiptStore(t, path)
  const rows = Array.from({ length: ID_BUCKET_ROWS + 300 }, (_, n) => receiptRow(n, { httpJson: '{}' }))
  for (let i = 0; i < rows.length; i += 2000) await store.log.appendMany(rows.slice(i, i + 2000))
  const sample = [0, 1, ID_BUCKET_ROWS - 1, ID_BUCKET_ROWS, rows.length - 1].map(i => rows[i]!.receiptId)
  const fresh = freshIds(500)
  const found = await store.query.findStored([...fresh, ...sample, sample[0]!, 'not an id'])
  t.same([...found].sort(), sample.map(id => [id, rows.findIndex(r => r.receiptId === id) + 1]).sort(), 'the stored ones with their seq, each once')

  // another process's store on the same file appends after the filter was filled
  const other = await openTestReceiptStore(t, path)
  const later = receiptRow(99_999, { httpJson: '{}' })
  const { seq } = await other.log.append(later)
  t.same([...(await store.query.findStored([later.receiptId, ...freshIds(10)]))], [[later.receiptId, seq]])
})

t.test('the filter never rules out a stored prefix', async t => {
  const path = join(t.testdir(), 'receipts.db')
  const store = await openTestReceiptStore(t, path)
  const rows = Array.from({ length: 3000 }, (_, n) => receiptRow(n, { httpJson: '{}' }))
  await store.log.appendMany(rows)
  const reader = await openDatabase(path, { driver: STORE_DRIVER }, { store: 'receipts' })
  t.teardown(() => reader.close())
  const filter = new ReceiptIdFilter(reader)
  await filter.sync()
  t.ok(rows.every(r => filter.mayContain(idPrefix(r.receiptId))), 'every stored prefix: maybe')
  const falsePositives = freshIds(10_000).filter(id => filter.mayContain(idPrefix(id))).length
  t.ok(falsePositives < 10, `fresh ids ruled out but for ${falsePositives} of 10,000`)
})
