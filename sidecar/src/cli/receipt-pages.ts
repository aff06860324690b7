// Paging helpers of `gate receipt list`: one page of the receipt query from either source (the store
// or --control-url), and --newest, which the query route does not offer (spec 03 pages oldest first).
import { PAGE_LIMIT, type UnverifiedReceipt } from '@gate/trust'

/** One page of the receipt query, from either source. */
export interface ReceiptPage {
  receipts: string[]
  nextCursor: number | null
  totalCount: number
  /** Rows of the page served as stored because they do not verify (`unverifiedReceipts`). */
  unverified: UnverifiedReceipt[]
}

/** Reads the page after `cursor` (undefined: beyond every stored receipt) of at most `limit` receipts. */
export type PageReader = (cursor: number | undefined, limit: number) => Promise<ReceiptPage>

/**
 * The `count` newest matches, newest first. The query pages oldest first (spec 03 orders by seq), so
 * this reads every match in the largest pages and keeps the last `count`: narrow large stores with
 * --since/--until. `unverified` holds those of every page read (every match), newest first.
 */
export async function readNewest(pageOf: PageReader, count: number): Promise<{ receipts: string[]; totalCount: number; unverified: UnverifiedReceipt[] }> {
  let kept: string[] = []
  const unverified: UnverifiedReceipt[] = []
  let totalCount = 0
  let cursor: number | null = 0
  while (cursor !== null) {
    const page: ReceiptPage = await pageOf(cursor, PAGE_LIMIT.max)
    totalCount = page.totalCount
    kept = kept.concat(page.receipts).slice(-count)
    unverified.push(...page.unverified)
    cursor = page.nextCursor
  }
  return { receipts: kept.reverse(), totalCount, unverified: unverified.reverse() }
}
