// The JSON text reader behind verifying receipts over the bytes received: canonical means exactly what
// canonicalJson writes (the shared RFC 8785 vectors, and generated values), nothing else ever passes
// as canonical, and object members are found where JSON.parse finds them.
import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { canonicalJson } from './canonical-json.js'
import { canonicalObjectMembers, isCanonicalJsonText, jsonObjectMembers } from './json-text.js'

const dir = process.env.GATE_VECTORS_DIR ?? new URL('../../../../shared/vectors/', import.meta.url).pathname
const vectors = JSON.parse(readFileSync(`${dir}/canonical/v1.json`, 'utf8')) as { cases: { id: string; input_json: string; canonical_json: string }[] }
const BIG_INTEGERS = ['i64_signed_boundaries', 'u64_above_i64_max', 'integer_above_double_precision']

t.test('the shared RFC 8785 vectors: every canonical text is canonical, and an input only when it is that text', async t => {
  t.equal(vectors.cases.length, 20)
  for (const c of vectors.cases) {
    // a double cannot hold these integers; such a text is never taken as canonical (the slow path,
    // which canonicalizes the parsed receipt, decides instead)
    const expected = !BIG_INTEGERS.includes(c.id)
    t.equal(isCanonicalJsonText(c.canonical_json), expected, `${c.id}: canonical text`)
    t.equal(isCanonicalJsonText(c.input_json), expected && c.input_json === c.canonical_json, `${c.id}: input text`)
    if (expected) t.equal(canonicalJson(JSON.parse(c.canonical_json)), c.canonical_json, `${c.id}: JSON.parse and canonicalJson give the same bytes back`)
  }
})

// JSON values (strings of any code points, control characters included), no integers a double cannot hold
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }))

/** Whether some member name, at any depth, needs an escape (such a text is left to the slow path). */
function hasEscapedName(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasEscapedName)
  if (typeof value !== 'object' || value === null) return false
  return Object.entries(value).some(([k, v]) => JSON.stringify(k) !== `"${k}"` || hasEscapedName(v))
}

t.test('what canonicalJson writes is canonical (whenever its member names need no escape)', async t => {
  await fc.assert(
    fc.property(jsonValue, value => isCanonicalJsonText(canonicalJson(value)) !== hasEscapedName(value)),
    { numRuns: 2000, seed: 8785 },
  )
  t.pass('2000 generated values')
})

/** Rewrites of a canonical text that keep its meaning but, mostly, not its bytes. */
const variants: ((text: string, value: unknown) => string)[] = [
  (_text, value) => JSON.stringify(value, null, 1),
  (_text, value) => JSON.stringify(value),
  text => ` ${text}`,
  text => text.replace(/":/, '": '),
  text => text.replace(/,"/, ', "'),
  text => text.replace(/[a-z]/, c => `\\u00${c.charCodeAt(0).toString(16)}`),
  text => text.replace(/\//, '\\/'),
  text => text.replace(/\\u001f/, '\\u001F'),
  text => text.replace(/\\n/, '\\u000a'),
  text => text.replace(/(\d)(?=[,}\]])/, '$1.0'),
  text => text.replace(/(\d)(?=[,}\]])/, '$1e0'),
  text => text.replace(/([,{])("[^"]*":[^,{}[\]]*),("[^"]*":[^,{}[\]]*)([,}])/, '$1$3,$2$4'),
]

t.test('a text that is not byte for byte what canonicalJson writes is never canonical', async t => {
  await fc.assert(
    fc.property(jsonValue, fc.integer({ min: 0, max: variants.length - 1 }), (value, which) => {
      const canonical = canonicalJson(value)
      const text = (variants[which] as (typeof variants)[number])(canonical, value)
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return true // a rewrite that broke the JSON: nothing to check
      }
      // soundness: canonical only when re-canonicalizing the parsed value gives these very bytes
      return !isCanonicalJsonText(text) || canonicalJson(parsed) === text
    }),
    { numRuns: 4000, seed: 33 },
  )
  t.notOk(isCanonicalJsonText('{"b":1,"a":2}'), 'members out of order')
  t.notOk(isCanonicalJsonText('{"a":1,"a":1}'), 'a repeated member')
  t.notOk(isCanonicalJsonText('{"a":-0}'), '-0')
  t.notOk(isCanonicalJsonText('"\\ud800"'), 'an escaped lone surrogate')
  t.notOk(isCanonicalJsonText('"\ud800"'), 'a lone surrogate')
  t.ok(isCanonicalJsonText('{"a":[1,"\\u001f\\n",{"b":null}],"b":true}'), 'nested, with the escapes JSON.stringify writes')
})

t.test('object members are found where JSON.parse finds them, whatever the whitespace', async t => {
  await fc.assert(
    fc.property(fc.dictionary(fc.string({ maxLength: 6 }), jsonValue, { maxKeys: 6 }), fc.constantFrom(0, 1, '\t', ' \n '), (object, indent) => {
      const text = JSON.stringify(object, null, indent)
      const members = jsonObjectMembers(text)
      if (members === undefined) return false
      const keys = Object.keys(object)
      return (
        members.length === keys.length &&
        members.every((m, i) => JSON.parse(`"${m.key}"`) === keys[i] && JSON.stringify(JSON.parse(text.slice(m.valueStart, m.end))) === JSON.stringify(object[keys[i] as string]))
      )
    }),
    { numRuns: 1000, seed: 7 },
  )
  t.equal(jsonObjectMembers('[1,2]'), undefined, 'not an object')
  t.same(
    jsonObjectMembers('{"a":1,"a":2}')?.map(m => m.key),
    ['a', 'a'],
    'a repeated name is reported twice (the caller decides)',
  )
  const nested = `{"a":${'['.repeat(70)}${']'.repeat(70)}}`
  t.equal(jsonObjectMembers(nested), undefined, 'nesting deeper than the reader goes is left to the slow path')
  t.same(canonicalObjectMembers('{"a":1, "b":2}'), undefined, 'canonicalObjectMembers wants the canonical text')
})
