import t from 'tap'
import { parseYamlText } from './parse-yaml.js'

t.test('with the budget key present, integers come back as plain numbers and the budget exact', async t => {
  const { root, exactBudgets } = parseYamlText('op:\n  x-gate-budget-limit: 18446744073709551615\n  other: 12\nbig: 99999999999999999999\n')
  const r = root as { op: Record<string, unknown>; big: unknown }
  t.equal(exactBudgets.get(r.op), 18446744073709551615n)
  t.equal(typeof r.op['x-gate-budget-limit'], 'number')
  t.equal(r.op.other, 12)
  t.equal(typeof r.big, 'number', 'no BigInt is left anywhere in the tree')
  t.doesNotThrow(() => JSON.stringify(root))
})

t.test('shared (acyclic) aliases are fine', async t => {
  const { root } = parseYamlText('a: &s {type: string}\nb: *s\n')
  t.same(root, { a: { type: 'string' }, b: { type: 'string' } })
})

t.test('merge keys are honoured', async t => {
  const { root } = parseYamlText('base: &b {type: string}\nx:\n  <<: *b\n  format: uuid\n')
  t.same((root as { x: unknown }).x, { type: 'string', format: 'uuid' })
})

t.test('numeric keys (response codes) become strings', async t => {
  const { root } = parseYamlText('responses:\n  200: {description: ok}\n')
  t.same(Object.keys((root as { responses: object }).responses), ['200'])
})
