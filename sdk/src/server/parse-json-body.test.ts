// parseJsonBody: JSON that RFC 8785 can canonicalize passes unchanged; a lone surrogate anywhere (string
// or member name, however deep) is named with its JSON Pointer; surrogate pairs and raw non-ASCII pass.
import t from 'tap'
import fc from 'fast-check'
import { canonicalJson } from '../protocol/canonical-json.js'
import { parseJsonBody } from './parse-json-body.js'

t.test('valid JSON is returned as JSON.parse returns it, from a Buffer or a string', async t => {
  const text = '{"a":[1,"x",{"b":null}],"é":"日本","pair":"\\ud83d\\ude00"}'
  t.same(parseJsonBody(Buffer.from(text)), { ok: true, value: JSON.parse(text) })
  t.same(parseJsonBody(text), { ok: true, value: JSON.parse(text) })
})

t.test('malformed JSON names the parser error', async t => {
  const r = parseJsonBody('{"a":')
  t.equal(r.ok, false)
  t.match(r, { problem: /^body is not valid JSON: / })
  t.match(parseJsonBody(''), { ok: false, problem: /^body is not valid JSON/ })
})

t.test('a lone surrogate is refused as not I-JSON, with where it is (the reader names the pointer)', async t => {
  for (const text of ['"\\ud800"', '{"\\ud800":1}']) t.match(parseJsonBody(text), { ok: false, problem: /^body is not I-JSON \(RFC 7493\): the (string|member name in the object) at \/ holds a lone surrogate/ }, text)
})

t.test('nesting past the depth limit is refused before anything is built', async t => {
  const depth = 200_000
  const text = '['.repeat(depth) + '"\\ud800"' + ']'.repeat(depth)
  t.match(parseJsonBody(text), { ok: false, problem: /^body refused: the JSON nests deeper than 64 levels/ })
  t.match(parseJsonBody('['.repeat(60) + '"\\ud800"' + ']'.repeat(60)), { ok: false, problem: /the string at \/0\/0\/0/ }, 'within it, the surrogate is found')
})

t.test('options pass through to the reader: a repeated key of the named member is reported', async t => {
  t.match(parseJsonBody('{"query":{"a":"1","a":"2"}}', { uniqueMembersIn: 'query' }), { ok: true, duplicateMember: 'a' })
})

t.test('property: accepted exactly when the value can be canonicalized', async t => {
  // any UTF-16 code unit, a surrogate one time in eight (JSON.stringify escapes a lone one as \uXXXX)
  const unit = fc.oneof({ arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 7 }, { arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }), weight: 1 }).map(c => String.fromCharCode(c))
  const value = fc.jsonValue({ maxDepth: 4, stringUnit: unit })
  const seen = { accepted: 0, refused: 0 }
  fc.assert(
    fc.property(value, v => {
      const r = parseJsonBody(JSON.stringify(v))
      let canonical = true
      try {
        canonicalJson(v)
      } catch {
        canonical = false
      }
      seen[r.ok ? 'accepted' : 'refused']++
      return r.ok === canonical
    }),
    { numRuns: 500, seed: 20261122 },
  )
  t.ok(seen.accepted > 50 && seen.refused > 50, `both kinds generated (${seen.accepted} accepted, ${seen.refused} refused)`)
})
