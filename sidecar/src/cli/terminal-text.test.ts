// Terminal-safe text: controls shown as escapes, JSON text changed in bytes but not in value.
import t from 'tap'
import { escapeControls, escapeJsonControls, escapeLines } from './terminal-text.js'

t.test('the escapes: every control as \\n or \\uXXXX, JSON text kept equal in value', async t => {
  t.equal(escapeControls('a\u001b[31mb\nc\td\u0085e\u2028f\u202eg'), 'a\\u001b[31mb\\nc\\td\\u0085e\\u2028f\\u202eg')
  t.equal(escapeControls('plain text, ünïcödé ✓'), 'plain text, ünïcödé ✓')
  const json = JSON.stringify({ s: 'x\u001b\u009b\u2029y', n: 1 }, null, 1)
  t.equal(JSON.parse(escapeJsonControls(json)).s, 'x\u001b\u009b\u2029y')
  t.notMatch(escapeJsonControls(json), /[\u007f-\u009f\u2029]/)
  t.match(escapeJsonControls(json), '\n', 'whitespace between tokens stays')
  t.equal(escapeLines('one\u001b\ntwo'), 'one\\u001b\ntwo', 'our own newlines stay')
})
