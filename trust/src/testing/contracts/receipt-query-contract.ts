// The receipt query contract (store-ports.ts TrustReceiptReader), kept by the SQLite receipt store
// (@gate/sidecar) and PgReceiptQuery over the same six receipts: point loads and cursor pages, the spec 03
// corpus filters (AND, inclusive bounds, both orders), counts and aggregates, the final receipts of a
// decision, and the rows a rotation converts. Every read of a receipt that only has a core form (a tool
// call's) answers `httpJson: null` and its signed core form in `coreJson`, never the core form as
// `httpJson`: the drift a backend once had (`coalesce(http_json, core_json) AS "httpJson"`).
import type { Test } from 'tap'
import type { CorpusFilter, CorpusRow } from '../../ports.js'
import type { ReceiptRow } from '../../stores/receipt-row.js'
import type { TrustReceiptStore } from '../../store-ports.js'
import { receiptRow } from '../receipt-rows.js'
import type { OpenStore } from './store-factory.js'

const T = 1_700_000_000
const SIGNER = 'ab'.repeat(32)
const CORE_JSON = '{"schema":"gate.receipt.v1","id":"core-only","pad":"' + 'c'.repeat(600) + '"}'

/** The corpus every query test reads: seq n is ROWS[n - 1]. */
function corpus(): ReceiptRow[] {
  const decision = receiptRow(1, { tenant: 'acme', capabilityId: 'cap_1', subjectKey: 's1', costUnits: 20, costCurrency: 'EUR', attemptedCostUnits: 0 })
  return [
    decision,
    receiptRow(2, { outcome: 'deny', tenant: 'acme', capabilityId: 'cap_2', routePattern: '/pets', toolName: 'POST /pets', method: 'POST', httpJson: JSON.stringify({ kernel_key: SIGNER, n: 2 }) }),
    // a tool call's receipt: only a core form
    receiptRow(3, { tenant: 'beta', method: 'tools/call', routePattern: 'read_file', toolServer: 'files', toolName: 'read_file', httpJson: null, coreJson: CORE_JSON }),
    receiptRow(4, { tenant: 'acme', kind: 'final', decisionReceiptId: decision.receiptId }),
    receiptRow(5, { outcome: 'cancelled', tenant: 'beta', capabilityId: 'cap_1', costUnits: 5, costCurrency: 'USD', attemptedCostUnits: 7, httpJson: JSON.stringify({ kernel_key: SIGNER, n: 5 }) }),
    receiptRow(6, { outcome: 'incomplete' }),
  ]
}

async function seeded(t: Test, open: OpenStore<TrustReceiptStore>): Promise<{ store: TrustReceiptStore; rows: ReceiptRow[] }> {
  const store = await open(t)
  const rows = corpus()
  await store.log.appendMany(rows)
  return { store, rows }
}

const seqsOf = (rows: readonly { seq: number }[]) => rows.map(r => r.seq)

export function testReceiptQueryContract(t: Test, open: OpenStore<TrustReceiptStore>): void {
  t.test('receipt query: point loads, stored ids and cursor pages', async t => {
    const { store, rows } = await seeded(t, open)
    const { query } = store
    t.equal(await query.latestSeq(), 6)
    t.equal(await query.count(), 6)
    t.match(await query.getById(rows[0]!.receiptId), { seq: 1, receiptId: rows[0]!.receiptId, tenant: 'acme', capabilityId: 'cap_1', costUnits: 20, costCurrency: 'EUR', kind: 'decision', httpJson: rows[0]!.httpJson, coreJson: null })
    t.equal(await query.getById('f'.repeat(64)), undefined)
    t.match(await query.getBySeq(2), { receiptId: rows[1]!.receiptId, outcome: 'deny', toolName: 'POST /pets' })
    t.equal(await query.getBySeq(7), undefined)
    t.same(await query.findStored([rows[0]!.receiptId, rows[2]!.receiptId, 'f'.repeat(64)]), new Map([[rows[0]!.receiptId, 1], [rows[2]!.receiptId, 3]]))
    t.same(seqsOf(await query.listAfter(2, 3)), [3, 4, 5])
    const iterated: number[] = []
    for await (const row of query.iterate(2, 2)) iterated.push(row.seq)
    t.same(iterated, [3, 4, 5, 6], 'iterate reads every row past the cursor, page by page')
  })

  t.test('receipt query: a core-only receipt reads back with httpJson null and its signed core form', async t => {
    const { store, rows } = await seeded(t, open)
    const { query } = store
    const id = rows[2]!.receiptId
    const check = (row: { httpJson: string | null; coreJson: string | null } | undefined, where: string) => {
      t.equal(row?.httpJson, null, `${where}: no HTTP form`)
      t.equal(row?.coreJson, CORE_JSON, `${where}: the signed core form, byte for byte`)
    }
    check(await query.getById(id), 'getById')
    check(await query.getBySeq(3), 'getBySeq')
    check((await query.listAfter(2, 1))[0], 'listAfter')
    for await (const row of query.iterate(2, 1)) if (row.seq === 3) check(row, 'iterate')
    check((await query.queryPage({ toolServer: 'files' }, 10))[0], 'queryPage')
    check((await query.queryPage({}, 10, 'desc')).find(r => r.seq === 3), 'queryPage desc')
    const http = (await query.queryPage({}, 10)).find(r => r.seq === 1)
    t.equal(http?.httpJson, rows[0]!.httpJson, 'an HttpReceipt row keeps its HTTP form')
    t.equal(http?.coreJson, null, 'and no core form until one is made')
    t.same(seqsOf(await query.listCorePending(0, 100)).includes(3), false, 'a core-only row is never pending a core form')
  })

  t.test('receipt query: the core-only receipts of one chain, in seq order; a chainId in another member does not count', async t => {
    const store = await open(t)
    const core = (n: number, body: Record<string, unknown>) => receiptRow(n, { method: 'tools/call', toolServer: 'files', toolName: 'read_file', httpJson: null, coreJson: JSON.stringify({ id: `c${n}`, ...body }) })
    const rows = [
      core(1, { chainId: 'chain-a', dagOrdinal: 0 }),
      core(2, { chainId: 'chain-b', dagOrdinal: 0 }),
      core(3, { chainId: 'chain-a', dagOrdinal: 1 }),
      // the text of a chain member, but inside metadata: not on the chain
      core(4, { metadata: { chainId: 'chain-a' } }),
      receiptRow(5, { httpJson: JSON.stringify({ id: 'h5', chainId: 'chain-a' }) }),
      core(6, { chainId: 'chain-a"x', dagOrdinal: 0 }),
    ]
    await store.log.appendMany(rows)
    const chain = async (id: string, limit = 100) => (await store.query.listChain(id, limit)).map(r => JSON.parse(r.coreJson!).id)
    t.same(await chain('chain-a'), ['c1', 'c3'], 'only top-level members of core-only receipts')
    t.same(await chain('chain-a', 1), ['c1'], 'the oldest `limit`')
    t.same(await chain('chain-b'), ['c2'])
    t.same(await chain('chain-a"x'), ['c6'], 'a quote in the id is matched as text, not as a pattern')
    t.same(await chain('chain-%'), [])
    await t.rejects(store.query.listChain('chain-a', 0), { code: 'gate_bad_request' })
  })

  t.test('receipt query: corpus filters combine with AND, bounds inclusive, in both orders', async t => {
    const { store } = await seeded(t, open)
    const { query } = store
    const cases: [CorpusFilter, number[]][] = [
      [{}, [1, 2, 3, 4, 5, 6]],
      [{ outcome: 'allow' }, [1, 3, 4]],
      [{ outcome: 'cancelled' }, [5]],
      [{ tenant: 'acme' }, [1, 2, 4]],
      [{ tenant: 'acme', outcome: 'deny' }, [2]],
      [{ capabilityId: 'cap_1' }, [1, 5]],
      [{ toolServer: 'files' }, [3]],
      [{ toolServer: 'http', toolName: 'POST /pets' }, [2]],
      [{ since: T + 2, until: T + 4 }, [2, 3, 4]],
      [{ since: T + 5, until: T + 2 }, []],
      [{ minCost: 10 }, [1]],
      [{ maxCost: 10 }, [5]],
      [{ minCost: 5, maxCost: 20 }, [1, 5]],
      [{ costCurrency: 'USD' }, [5]],
      [{ withCost: true }, [1, 5]],
      [{ withCapability: true }, [1, 2, 5]],
      [{ subject: { subjectKey: 's1', capabilityIds: ['cap_2'] } }, [1, 2]],
      [{ afterSeq: 2 }, [3, 4, 5, 6]],
      [{ throughSeq: 3 }, [1, 2, 3]],
      [{ afterSeq: 1, throughSeq: 4, tenant: 'acme' }, [2, 4]],
    ]
    for (const [filter, expected] of cases) {
      const name = JSON.stringify(filter)
      t.same(seqsOf(await query.queryPage(filter, 100)), expected, `${name} ascending`)
      t.same(seqsOf(await query.queryPage(filter, 100, 'desc')), [...expected].reverse(), `${name} descending`)
      t.equal(await query.countMatching(filter), expected.length, `${name} counted`)
    }
    t.same(seqsOf(await query.queryPage({}, 2)), [1, 2], 'a page holds at most `limit` rows, the oldest first')
    t.same(seqsOf(await query.queryPage({}, 2, 'desc')), [6, 5], 'or the newest first')
    const row = (await query.queryPage({ capabilityId: 'cap_1', outcome: 'cancelled' }, 1))[0] as CorpusRow
    t.match(row, { seq: 5, tenant: 'beta', outcome: 'cancelled', capabilityId: 'cap_1', toolServer: 'http', costUnits: 5, costCurrency: 'USD', attemptedCostUnits: 7 })
  })

  t.test('receipt query: aggregates count outcomes over the filter, in one group or per tool', async t => {
    const { store } = await seeded(t, open)
    const { query } = store
    t.match(await query.aggregate({}, 'none'), [{ total: 6, allow: 3, deny: 1, cancelled: 1, incomplete: 1 }])
    t.match(await query.aggregate({ tenant: 'acme' }, 'none'), [{ total: 3, allow: 2, deny: 1, cancelled: 0, incomplete: 0 }])
    const byTool = (await query.aggregate({}, 'tool')).map(r => [r.toolServer, r.toolName, r.total]).sort()
    t.same(byTool, [['files', 'read_file', 1], ['http', 'GET /items', 4], ['http', 'POST /pets', 1]].sort())
    t.same(await query.aggregate({ tenant: 'nobody' }, 'none'), [], 'no group without receipts')
  })

  t.test('receipt query: the final receipts of a decision', async t => {
    const { store, rows } = await seeded(t, open)
    const finals = await store.query.findFinals(1, rows[0]!.receiptId)
    t.same(seqsOf(finals), [4])
    t.match(finals[0], { kind: 'final', decisionReceiptId: rows[0]!.receiptId })
    t.same(await store.query.findFinals(1, rows[1]!.receiptId), [])
  })

  t.test('receipt query: the rows pending a core form, all or one signer\'s, until one is stored', async t => {
    const { store } = await seeded(t, open)
    const { query, log } = store
    t.same(seqsOf(await query.listCorePending(0, 100)), [1, 2, 4, 5, 6])
    t.same(seqsOf(await query.listCorePending(0, 100, SIGNER)), [2, 5], 'only rows naming the signer')
    t.same(seqsOf(await query.listCorePending(2, 2)), [4, 5], 'past a cursor, at most `limit`')
    await log.setCoreJson(2, '{"core":2}')
    t.same(seqsOf(await query.listCorePending(0, 100, SIGNER)), [5])
    t.match(await query.listCorePending(4, 1), [{ seq: 5, httpJson: JSON.stringify({ kernel_key: SIGNER, n: 5 }) }])
  })
}
