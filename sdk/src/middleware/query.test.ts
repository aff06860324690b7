// Query parsing: decoded keys, duplicates refused, the capability parameter split off and removed from
// the raw query string the app sees (other pairs kept byte for byte).
import t from 'tap'
import { parseQuery } from './query.js'

t.test('decodes pairs the way URLSearchParams does', async t => {
  t.same(parseQuery('a=1&b=two+words&c=%C3%BC&d&e=&f=%zz').query, { a: '1', b: 'two words', c: 'ü', d: '', e: '', f: '%zz' })
  t.same(parseQuery('').query, {})
  t.same(parseQuery('&&a=1&').query, { a: '1' })
})

t.test('a key given twice, in any spelling, is a duplicate answering 400', async t => {
  for (const q of ['a=1&a=1', 'a=1&%61=2', 'a+b=1&a%20b=2', 'gate_capability=1&gate%5Fcapability=2']) {
    t.throws(() => parseQuery(q), { code: 'gate_bad_request', status: 400, name: 'DuplicateQueryKeyError' }, q)
  }
})

t.test('gate_capability is returned separately and removed from the raw query', async t => {
  const parsed = parseQuery('x=%2F1&gate_capability=%7B%22id%22%3A1%7D&y=2')
  t.equal(parsed.capability, '{"id":1}')
  t.same(parsed.query, { x: '/1', y: '2' })
  t.equal(parsed.strippedRawQuery, 'x=%2F1&y=2', 'the other pairs keep their encoding')
  t.equal(parseQuery('gate_capability=t').strippedRawQuery, '')
  t.equal(parseQuery('a=1').strippedRawQuery, null)
})

t.test('a __proto__ key stays data', async t => {
  const { query } = parseQuery('__proto__=x&constructor=y')
  t.equal(Object.getPrototypeOf(query), Object.prototype)
  t.equal(Object.getOwnPropertyDescriptor(query, '__proto__')?.value, 'x')
  t.equal(JSON.stringify(query), '{"__proto__":"x","constructor":"y"}')
})
