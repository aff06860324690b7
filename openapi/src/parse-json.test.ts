import t from 'tap'
import { exactInteger, parseJsonText } from './parse-json.js'

t.test('exactInteger reads every JSON integer form exactly and rejects fractions', async t => {
  t.equal(exactInteger('18446744073709551615'), 18446744073709551615n)
  t.equal(exactInteger('9007199254740993'), 9007199254740993n)
  t.equal(exactInteger('1e19'), 10000000000000000000n)
  t.equal(exactInteger('1.5E3'), 1500n)
  t.equal(exactInteger('1000e-3'), 1n)
  t.equal(exactInteger('-5'), -5n)
  t.equal(exactInteger('0.000'), 0n)
  t.equal(exactInteger('0e99999999'), 0n)
  t.equal(exactInteger('0.5'), null)
  t.equal(exactInteger('9007199254740993.5'), null)
  t.equal(exactInteger('1e-400'), null)
  t.ok((exactInteger('1e999999999') as bigint) > 18446744073709551615n, 'a huge exponent is out of range, not a huge BigInt')
})

t.test('budget literals above 2^53 are kept exact, by holder object', async t => {
  const text = '{"a":{"x-gate-budget-limit": 18446744073709551615},"b":{"x-gate-budget-limit":12}}'
  const { root, exactBudgets } = parseJsonText(text)
  const r = root as Record<string, Record<string, unknown>>
  t.equal(exactBudgets.get(r.a!), 18446744073709551615n)
  t.equal(exactBudgets.get(r.b!), undefined, 'a small literal needs no exact copy')
  t.equal(typeof r.a!['x-gate-budget-limit'], 'number', 'the tree itself stays plain JSON data')
})

t.test('the budget key quoted inside a string is not mistaken for a key', async t => {
  const text = '{"d":"\\"x-gate-budget-limit\\": 99999999999999999999","e":{"x-gate-budget-limit":99999999999999999999}}'
  const { root, exactBudgets } = parseJsonText(text)
  const r = root as Record<string, unknown>
  t.equal(r.d, '"x-gate-budget-limit": 99999999999999999999')
  t.equal(exactBudgets.get(r.e as object), 99999999999999999999n)
})

t.test('a budget literal that is not an integer is recorded as such (null)', async t => {
  const { root, exactBudgets } = parseJsonText('{"x-gate-budget-limit": 9007199254740993.5}')
  t.equal(exactBudgets.get(root as object), null)
})
