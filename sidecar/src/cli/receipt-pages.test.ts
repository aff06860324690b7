import t from 'tap'
import { readNewest, type ReceiptPage } from './receipt-pages.js'

/** Pages over `stored` the way the query does: oldest first, seq cursors, a full page has a next cursor. */
function pagesOf(stored: string[], seen: { limits: number[] }) {
  return async (cursor: number | undefined, limit: number): Promise<ReceiptPage> => {
    seen.limits.push(limit)
    const from = cursor ?? stored.length
    const receipts = stored.slice(from, from + limit)
    const unverified = receipts.flatMap((r, i) => (r.startsWith('bad') ? [{ receiptId: r, seq: from + i + 1, failedStep: 'signature' as const, detail: 'signature does not verify' }] : []))
    return { receipts, nextCursor: receipts.length === limit ? from + limit : null, totalCount: stored.length, unverified }
  }
}

t.test('readNewest keeps the last matches of every page, newest first, reading the largest pages', async t => {
  const stored = Array.from({ length: 450 }, (_, i) => `r${i}`)
  const seen = { limits: [] as number[] }
  const { receipts, totalCount } = await readNewest(pagesOf(stored, seen), 3)
  t.same(receipts, ['r449', 'r448', 'r447'])
  t.equal(totalCount, 450)
  t.same(seen.limits, [200, 200, 200], 'three pages of 200 (the last one short)')
})

t.test('readNewest across a page boundary, and when fewer match than asked', async t => {
  const stored = Array.from({ length: 201 }, (_, i) => `r${i}`)
  t.same((await readNewest(pagesOf(stored, { limits: [] }), 2)).receipts, ['r200', 'r199'])
  t.same((await readNewest(pagesOf(['a', 'b'], { limits: [] }), 50)).receipts, ['b', 'a'])
  t.same(await readNewest(pagesOf([], { limits: [] }), 5), { receipts: [], totalCount: 0, unverified: [] })
})

t.test('readNewest reports the receipts that did not verify on every page it read, newest first', async t => {
  const stored = Array.from({ length: 450 }, (_, i) => (i === 10 || i === 300 ? `bad${i}` : `r${i}`))
  const { receipts, unverified } = await readNewest(pagesOf(stored, { limits: [] }), 2)
  t.same(receipts, ['r449', 'r448'])
  t.same(unverified.map(u => [u.receiptId, u.seq]), [['bad300', 301], ['bad10', 11]], 'every match was read: each unverified one is named')
})
