import t from 'tap'
import fc from 'fast-check'
import canonicalize from 'canonicalize'
import { canonicalJson, CanonicalMembers, parseJsonExact } from '../index.js'

// JSON values as JSON.parse would produce them (no -0 distinctions lost, no undefined).
const jsonValue = fc.jsonValue({ maxDepth: 6 })

t.test('agrees with the canonicalize package on any JSON value', async t => {
  fc.assert(
    fc.property(jsonValue, v => {
      t.equal(canonicalJson(v), (canonicalize as unknown as (x: unknown) => string)(v))
    }),
    { numRuns: 500 },
  )
})

t.test('key order never changes the output', async () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), jsonValue, { maxKeys: 12 }), obj => {
      const reversed = Object.fromEntries(Object.entries(obj).reverse())
      return canonicalJson(obj) === canonicalJson(reversed)
    }),
    { numRuns: 300 },
  )
})

t.test('canonical output parses back to the same value and is a fixed point', async () => {
  fc.assert(
    fc.property(jsonValue, v => {
      const c = canonicalJson(v)
      return canonicalJson(JSON.parse(c)) === c
    }),
    { numRuns: 500 },
  )
})

t.test('unicode strings and keys: sorted by UTF-16 code units, minimal escaping', async t => {
  fc.assert(
    fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), { maxKeys: 8 }), obj => {
      const keys = Object.keys(JSON.parse(canonicalJson(obj)))
      return keys.join('\u0000') === [...Object.keys(obj)].sort().join('\u0000')
    }),
  )
  t.equal(canonicalJson({ '\ue000': 1, '\ud800\udc00': 2 }), '{"\ud800\udc00":2,"\ue000":1}')
  t.equal(canonicalJson('\u0007\u001f"\\/é'), '"\\u0007\\u001f\\"\\\\/é"')
})

t.test('numbers use the ECMAScript shortest form', async t => {
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), n => canonicalJson(n) === (Object.is(n, -0) ? '0' : String(n))))
  t.equal(canonicalJson([1e21, 1e-7, -0, 0.1 + 0.2, 5e-324]), '[1e+21,1e-7,0,0.30000000000000004,5e-324]')
})

t.test('bigint values are written exactly', async t => {
  t.equal(canonicalJson({ n: 18446744073709551615n }), '{"n":18446744073709551615}')
  t.equal(canonicalJson(parseJsonExact('[9007199254740993,-9223372036854775808,12]')), '[9007199254740993,-9223372036854775808,12]')
})

t.test('values JSON cannot carry are refused with gate_canonical_json_failed', async t => {
  const bad: [string, unknown][] = [
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['lone surrogate', 'a\ud800b'],
    ['lone surrogate key', { '\udc00': 1 }],
    ['function', () => 1],
    ['symbol', Symbol('x')],
    ['undefined in array', [1, undefined]],
    ['Date', new Date(0)],
    ['Map', new Map()],
    ['class instance', new (class Foo {})()],
  ]
  for (const [name, v] of bad) t.throws(() => canonicalJson(v), { code: 'gate_canonical_json_failed' }, name)
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.throws(() => canonicalJson(cyclic), { code: 'gate_canonical_json_failed' }, 'cycle')
})

t.test('undefined members are omitted, as JSON.stringify does', async t => {
  t.equal(canonicalJson({ b: undefined, a: 1 }), '{"a":1}')
})

t.test('member-wise assembly equals whole-object canonicalization', async () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), jsonValue, { maxKeys: 10 }), fc.string(), fc.string(), fc.jsonValue({ maxDepth: 2 }), (obj, drop, add, value) => {
      const m = new CanonicalMembers(obj)
      const without = { ...obj }
      delete without[drop]
      const ok = m.join() === canonicalJson(obj) && m.join(drop) === canonicalJson(without)
      m.set(add, canonicalJson(value))
      return ok && m.join() === canonicalJson({ ...obj, [add]: value })
    }),
    { numRuns: 300 },
  )
})

t.test('parseJsonExact rejects bad JSON with gate_bad_request', async t => {
  for (const bad of ['{', '[1,]', '{"a":1}x', 'nul', '"abc', '{"a" 1}', '01', '12345678901234567 x']) {
    t.throws(() => parseJsonExact(bad), { code: 'gate_bad_request' }, bad)
  }
  t.same(parseJsonExact('{"a":[1,2.5,"x\\n",true,null],"__proto__":{"b":12345678901234567890}}'), JSON.parse('{"a":[1,2.5,"x\\n",true,null],"__proto__":{"b":0}}') && {
    a: [1, 2.5, 'x\n', true, null],
    ['__proto__']: { b: 12345678901234567890n },
  })
})
