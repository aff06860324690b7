// Strict query parsing: unknown names listed, duplicates refused, u64 exact, limits clamped.
import t from 'tap'
import { parseReceiptQuery } from './receipt-query.js'
import { lowerBound, readClamped, readQueryParameters, readU64, upperBound, U64_MAX } from './query-params.js'

const url = (q: string) => new URL(`http://x/v1/receipts/query?${q}`)

t.test('unknown parameters are all named; a repeated key is refused', async t => {
  t.throws(() => readQueryParameters(url('a=1&b=2&limit=3'), ['limit']), { code: 'gate_bad_request', message: 'unknown query parameters: a, b' })
  t.throws(() => readQueryParameters(url('limit=1&limit=2'), ['limit']), { message: 'query key "limit" appears more than once' })
})

t.test('u64 values parse exactly up to 2^64 - 1', async t => {
  const values = (v: string) => new Map([['n', v]])
  t.equal(readU64(values('18446744073709551615'), 'n'), U64_MAX)
  t.equal(readU64(values('9007199254740993'), 'n'), 9007199254740993n)
  t.equal(readU64(values('007'), 'n'), 7n)
  for (const bad of ['18446744073709551616', '-1', '+1', '1.0', '1e3', '', ' 1', '0x10', '123456789012345678901']) {
    t.throws(() => readU64(values(bad), 'n'), { code: 'gate_bad_request' }, JSON.stringify(bad))
  }
  t.same(lowerBound(9007199254740993n), { impossible: true })
  t.same(lowerBound(5n), { value: 5, impossible: false })
  t.equal(upperBound(U64_MAX), undefined)
  t.equal(readClamped(new Map([['limit', '0']]), 'limit', 1, 200, 50), 1)
  t.equal(readClamped(new Map([['limit', '999999999999999999']]), 'limit', 1, 200, 50), 200)
  t.equal(readClamped(new Map(), 'limit', 1, 200, 50), 50)
})

t.test('the receipt query: cost rules, impossible bounds, cursor beyond every seq', async t => {
  t.throws(() => parseReceiptQuery(url('minCost=1')), { message: /costCurrency is required/ })
  t.throws(() => parseReceiptQuery(url('minCost=2&maxCost=1&costCurrency=USD')), { message: /minCost \(2\) is above maxCost \(1\)/ })
  t.throws(() => parseReceiptQuery(url('costCurrency=US')), { message: /three uppercase ASCII letters/ })
  t.match(parseReceiptQuery(url('minCost=18446744073709551615&costCurrency=USD')), { impossible: true })
  t.match(parseReceiptQuery(url('maxCost=18446744073709551615&costCurrency=USD')), { impossible: false, filter: { costCurrency: 'USD' } })
  t.match(parseReceiptQuery(url('cursor=18446744073709551615')), { cursor: undefined, impossible: false })
  t.same(parseReceiptQuery(url('')), { filter: {}, agentSubject: undefined, cursor: 0, limit: 50, impossible: false })
})
