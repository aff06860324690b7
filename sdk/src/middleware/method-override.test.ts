// Method overrides are refused whatever carries them: the three headers, `_method` in the query, or a
// `_method` field of an urlencoded form body; the same words anywhere else pass.
import t from 'tap'
import { refuseMethodOverride } from './method-override.js'

const form = (text: string) => new TextEncoder().encode(text)
const FORM = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }

t.test('each carrier of a method override is refused with 400 gate_bad_request naming it', async t => {
  const cases: [Record<string, string>, Record<string, string> | undefined, Uint8Array | null, RegExp][] = [
    [{ 'x-http-method-override': 'DELETE' }, undefined, null, /x-http-method-override header/],
    [{ 'x-http-method': 'PUT' }, undefined, null, /x-http-method header/],
    [{ 'x-method-override': 'PATCH' }, undefined, null, /x-method-override header/],
    [{}, { _method: 'DELETE' }, null, /_method query parameter/],
    [FORM, undefined, form('name=x&_method=DELETE'), /_method form field/],
    [FORM, undefined, form('name=x&%5Fmethod=DELETE'), /_method form field/],
  ]
  for (const [headers, query, body, message] of cases) {
    t.throws(() => refuseMethodOverride(headers, query, body), { code: 'gate_bad_request', name: 'MethodOverrideError', message }, JSON.stringify([headers, query]))
  }
})

t.test('the same words as values, or outside a form, pass', async t => {
  t.doesNotThrow(() => refuseMethodOverride({}, { method: '_method' }, null))
  t.doesNotThrow(() => refuseMethodOverride(FORM, undefined, form('name=_method')))
  t.doesNotThrow(() => refuseMethodOverride({ 'content-type': 'application/json' }, undefined, form('{"_method":"DELETE"}')))
  t.doesNotThrow(() => refuseMethodOverride({ 'x-method': 'DELETE' }, undefined, null))
})
