// NDJSON answers split into parts as they arrive, whatever the chunking of the body.
import t from 'tap'
import { isNdjson, readNdjson } from './ndjson-stream.js'

async function* body(...parts: string[]) {
  for (const p of parts) yield Buffer.from(p)
}

t.test('lines become parts, split anywhere across body chunks; blank lines are skipped', async t => {
  const parts: unknown[] = []
  const n = await readNdjson(body('{"a":1}\n{"b"', ':2}\n\n', '[3]'), 1024, v => parts.push(v))
  t.equal(n, 3)
  t.same(parts, [{ a: 1 }, { b: 2 }, [3]])
})

t.test('a line that is not JSON, or one past the limit, fails the call', async t => {
  await t.rejects(readNdjson(body('{"a":1}\nnot json\n'), 1024, () => {}), { name: 'ToolServerError', kind: 'upstream' })
  await t.rejects(readNdjson(body('x'.repeat(2000)), 1024, () => {}), { name: 'ToolServerError', kind: 'upstream' })
})

t.test('the NDJSON content types', async t => {
  t.ok(isNdjson('application/x-ndjson; charset=utf-8'))
  t.ok(isNdjson('application/jsonl'))
  t.notOk(isNdjson('application/json'))
  t.notOk(isNdjson(undefined))
})
