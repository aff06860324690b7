import t from 'tap'
import { parseRequestTarget } from './request-target.js'

t.test('a target without a query forwards as is', async t => {
  t.same(parseRequestTarget('/pets/1'), { path: '/pets/1', query: undefined, capability: undefined, forwardSearch: '' })
  t.same(parseRequestTarget('/pets?'), { path: '/pets', query: undefined, capability: undefined, forwardSearch: '?' })
})

t.test('gate_capability is taken out and the rest of the query stays byte-identical, order kept', async t => {
  const r = parseRequestTarget('/p?z=1&gate_capability=tok%2Fen&a=%41+b&&x')
  t.equal(r.capability, 'tok/en')
  t.equal(r.forwardSearch, '?z=1&a=%41+b&&x')
  t.same(r.query, { z: '1', a: 'A b', x: '' })
  t.equal(parseRequestTarget('/p?gate_capability=t').forwardSearch, '')
  t.equal(parseRequestTarget('/p?a=1&gate_capability=t').forwardSearch, '?a=1')
  t.equal(parseRequestTarget('/p?gate%5Fcapability=t&b=2').capability, 't', 'an encoded key is the same parameter')
  t.equal(parseRequestTarget('/p?gate%5Fcapability=t&b=2').forwardSearch, '?b=2')
})

t.test('duplicate query key answers 400 gate_bad_request, decoded keys compared', async t => {
  for (const url of ['/p?a=1&a=2', '/p?a=1&%61=2', '/p?gate_capability=1&gate_capability=2']) {
    t.throws(() => parseRequestTarget(url), { code: 'gate_bad_request', status: 400 }, url)
  }
})

t.test('a __proto__ key stays data', async t => {
  const r = parseRequestTarget('/p?__proto__=x')
  t.equal(Object.getPrototypeOf(r.query), Object.prototype)
  t.equal(Object.getOwnPropertyDescriptor(r.query, '__proto__')?.value, 'x')
})

t.test('a non-origin-form target answers 400', async t => {
  t.throws(() => parseRequestTarget('http://evil.example/x'), { code: 'gate_bad_request' })
  t.throws(() => parseRequestTarget('*'), { code: 'gate_bad_request' })
})
