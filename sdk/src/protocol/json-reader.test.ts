// readJson: the grammar JSON.parse accepts and nothing else, limits answered before anything is built,
// I-JSON, and the member-scoped extras (unique keys, raw elements, number literals, exact integers).
import t from 'tap'
import fc from 'fast-check'
import { isJsonReadError, JsonReadError, readJson } from './json-reader.js'

function refusal(text: string, options = {}): JsonReadError {
  try {
    readJson(text, options)
  } catch (err) {
    if (err instanceof JsonReadError) return err
    throw err
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`)
}

t.test('values come out as JSON.parse makes them', async t => {
  const text = '{"a":[1,-0.5e3,"x\\n\\u00e9",{"b":null,"c":true,"d":false}],"é":"日本","pair":"\\ud83d\\ude00","__proto__":{"p":1}}'
  const { value } = readJson(text)
  t.same(value, JSON.parse(text))
  t.ok(Object.hasOwn(value as object, '__proto__'), '__proto__ stays an own member')
  t.same(readJson(' \t\n 42 \r\n').value, 42)
})

t.test('property: accepted exactly when JSON.parse accepts (within limits, I-JSON)', async t => {
  const alphabet = fc.constantFrom(...'{}[],:"\\ 0123456789-+.eEtrufalsn\t\nabx'.split(''))
  const garbage = fc.array(alphabet, { maxLength: 24 }).map(cs => cs.join(''))
  const seen = { accepted: 0, refused: 0 }
  fc.assert(
    fc.property(fc.oneof(garbage, fc.jsonValue({ maxDepth: 5 }).map(v => JSON.stringify(v))), text => {
      let expected = true
      try {
        JSON.parse(text)
      } catch {
        expected = false
      }
      let accepted = true
      try {
        readJson(text)
      } catch (err) {
        if (!(err instanceof JsonReadError) || err.kind !== 'syntax') throw err
        accepted = false
      }
      seen[accepted ? 'accepted' : 'refused']++
      return accepted === expected
    }),
    { numRuns: 3000, seed: 20261201 },
  )
  t.ok(seen.accepted > 300 && seen.refused > 300, `both kinds generated (${seen.accepted} accepted, ${seen.refused} refused)`)
})

t.test('nesting past maxDepth is refused as soon as the limit is crossed, whatever follows', async t => {
  t.same(readJson('['.repeat(64) + ']'.repeat(64)).value, JSON.parse('['.repeat(64) + ']'.repeat(64)), '64 levels pass')
  const deep = '['.repeat(5 * 1024 * 1024)
  const err = refusal(deep)
  t.equal(err.kind, 'limit')
  t.equal(err.code, 'gate_bad_request')
  t.equal(err.offset, 64, 'refused at the 65th bracket, not after reading 5 MiB')
  t.match(err.message, /nests deeper than 64 levels/)
  t.equal(refusal('{"a":'.repeat(10) + '1' + '}'.repeat(10), { maxDepth: 9 }).kind, 'limit', 'objects count too')
  t.same(readJson('{"a":'.repeat(10) + '1' + '}'.repeat(10), { maxDepth: 10 }).value !== undefined, true)
})

t.test('more values than maxNodes are refused', async t => {
  const flat = `[${'0,'.repeat(99_999)}0]`
  t.equal(refusal(flat).kind, 'limit', '100,001 values (the array and 100,000 numbers)')
  t.match(refusal(flat).message, /more than 100000 values/)
  t.equal((readJson(flat, { maxNodes: 100_001 }).value as unknown[]).length, 100_000)
  t.equal(refusal('{"a":"x","b":"y","c":{}}', { maxNodes: 3 }).kind, 'limit', 'strings and objects count')
})

t.test('a lone surrogate, escaped or raw, in a value or a member name is refused with its pointer', async t => {
  const cases: [string, RegExp][] = [
    ['"\\ud800"', /the string at \/ holds a lone surrogate/],
    ['{"path":"/a\\udfff"}', /the string at \/path holds/],
    ['{"q":{"x/y~z":["ok","\\uDBFF"]}}', /the string at \/q\/x~1y~0z\/1 holds/],
    ['{"\\ud800":1}', /member name in the object at \/ holds/],
    ['{"a":{"b\\ud800c":1}}', /member name in the object at \/a holds/],
    ['["\\ude00\\ud83d"]', /the string at \/0 holds/],
    ['["a\ud800b"]', /the string at \/0 holds/],
    ['["\udc00"]', /the string at \/0 holds/],
  ]
  for (const [text, message] of cases) {
    const err = refusal(text)
    t.equal(err.kind, 'i-json', text)
    t.match(err.message, message, text)
  }
  t.same(readJson('["\ud83d\ude00","\\ud83d\\ude00"]').value, ['😀', '😀'], 'pairs, raw or escaped, pass')
})

t.test('uniqueMembersIn reports the first repeated key of that top-level member, decoded', async t => {
  t.equal(readJson('{"query":{"a":"1","\\u0061":"2"}}', { uniqueMembersIn: 'query' }).duplicateMember, 'a')
  t.equal(readJson('{"query":{"\\u00e9":"1","é":"2"}}', { uniqueMembersIn: 'query' }).duplicateMember, 'é')
  t.equal(readJson('{"query":{"a":"1","b":"2"}}', { uniqueMembersIn: 'query' }).duplicateMember, undefined)
  t.equal(readJson('{"x":{"query":{"a":"1","a":"2"}}}', { uniqueMembersIn: 'query' }).duplicateMember, undefined, 'only the top-level member')
  t.equal(readJson('{"other":{"a":"1","a":"2"}}', { uniqueMembersIn: 'query' }).duplicateMember, undefined)
  t.same(readJson('{"query":{"a":"1","a":"2"}}', { uniqueMembersIn: 'query' }).value, { query: { a: '2' } }, 'the value keeps the last, as JSON.parse')
})

t.test('rawElementsOf returns the elements of that top-level array as sent', async t => {
  const text = '{"nextCursor":3,"receipts":[ {"n":12345678901234567890, "b":1} ,"s",[1,2]],"x":[9]}'
  t.same(readJson(text, { rawElementsOf: 'receipts' }).rawElements, ['{"n":12345678901234567890, "b":1}', '"s"', '[1,2]'])
  t.same(readJson('{"receipts":[]}', { rawElementsOf: 'receipts' }).rawElements, [])
  t.equal(readJson('{"receipts":{}}', { rawElementsOf: 'receipts' }).rawElements, undefined)
})

t.test('numberLiteralsOf returns the source literal of every such number that a double may not hold exactly', async t => {
  const text = '{"a":{"limit":18446744073709551615},"b":{"limit":12},"c":{"limit":1e3},"d":"\\"limit\\":99999999999999999999"}'
  const read = readJson(text, { numberLiteralsOf: 'limit' })
  const v = read.value as Record<string, object>
  t.equal(read.numberLiterals?.get(v.a!), '18446744073709551615')
  t.equal(read.numberLiterals?.get(v.c!), '1e3')
  t.equal(read.numberLiterals?.get(v.b!), '12', 'recorded once the build pass runs')
  t.equal(readJson('{"b":{"limit":12}}', { numberLiteralsOf: 'limit' }).numberLiterals, undefined, 'short integers alone need no second pass')
})

t.test("bigIntegers 'bigint' keeps integers past 2^53 exact; 'number' rounds as JSON.parse", async t => {
  t.same(readJson('[9007199254740993,-12345678901234567890,1.5,9007199254740991]', { bigIntegers: 'bigint' }).value, [9007199254740993n, -12345678901234567890n, 1.5, 9007199254740991])
  t.same(readJson('[9007199254740993]').value, [9007199254740992])
})

t.test('rawMemberOf returns the one top-level member value as sent, or nothing it cannot vouch for', async t => {
  const raw = (text: string) => readJson(text, { rawMemberOf: 'receipt' }).rawMember
  t.equal(raw('{"a":1, "receipt" : {"z":1,  "a":[1 , 2]} ,"b":"\\u0041"}'), '{"z":1,  "a":[1 , 2]}', 'the bytes between the colon and what follows')
  t.equal(raw('{"receipt":null}'), 'null')
  t.equal(raw('{"receipts":{}}'), undefined, 'another name')
  t.equal(raw('{"x":{"receipt":{}}}'), undefined, 'only a top-level member')
  t.equal(raw('{"receipt":{"a":1},"receipt":{"a":2}}'), undefined, 'twice: the value keeps the last, so no text is trusted')
  t.equal(raw('{"rec\\u0065ipt":{"a":2},"receipt":{"a":1}}'), undefined, 'an escaped name may be the same member')
  t.equal(raw('{"receipt":{"a":1},"\\u0078":1}'), undefined, 'any escaped top-level name')
  t.equal(raw('[{"receipt":1}]'), undefined, 'not an object')
  t.equal(readJson('{"receipt":1}').rawMember, undefined, 'not asked for')
})

t.test('syntax errors say where', async t => {
  for (const [text, detail] of [
    ['', /no value/],
    ['{"a":', /unexpected end/],
    ['{"a" 1}', /expected :/],
    ['[1 2]', /expected , or \]/],
    ['"a\u0001"', /control character/],
    ['"\\x"', /bad escape/],
    ['01', /after the value/],
    ['1.', /after the decimal point/],
    ['tru', /expected true/],
  ] as const) {
    const err = refusal(text)
    t.equal(err.kind, 'syntax', text)
    t.match(err.detail, detail, text)
    t.ok(isJsonReadError(err))
  }
})
