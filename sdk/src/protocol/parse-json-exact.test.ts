// parseJsonExact: integers beyond the safe range stay exact wherever a JSON value can stand; digit runs
// inside strings (hex hashes) change nothing.
import t from 'tap'
import { canonicalJson } from './canonical-json.js'
import { parseJsonExact } from './parse-json-exact.js'

t.test('a long integer stays exact in every position a value can take', async t => {
  const cases: [string, unknown][] = [
    ['9007199254740993', 9007199254740993n],
    ['-9007199254740993', -9007199254740993n],
    ['{"a":9007199254740993}', { a: 9007199254740993n }],
    ['{"a": \n\t 9007199254740993}', { a: 9007199254740993n }],
    ['[1,9007199254740993]', [1, 9007199254740993n]],
    ['[ 9007199254740993 ]', [9007199254740993n]],
    ['{"x":[{"y":-12345678901234567890}]}', { x: [{ y: -12345678901234567890n }] }],
  ]
  for (const [text, expected] of cases) t.same(parseJsonExact(text), expected, text)
  t.equal(canonicalJson(parseJsonExact('{"n":123456789012345678901234567890}')), '{"n":123456789012345678901234567890}')
})

t.test('digit runs inside strings and safe numbers parse as JSON.parse does', async t => {
  const text = JSON.stringify({ hash: '1234567890123456789012345678901234567890abcdef', key: 'ff:1234567890123456789', n: 42, f: 1.5, big: 9007199254740991 })
  t.same(parseJsonExact(text), JSON.parse(text))
})

t.test('bad JSON is gate_bad_request on both paths', async t => {
  t.throws(() => parseJsonExact('{"a":'), { code: 'gate_bad_request' })
  t.throws(() => parseJsonExact('{"a":12345678901234567890'), { code: 'gate_bad_request' })
})
