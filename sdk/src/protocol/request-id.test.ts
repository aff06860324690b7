// UUIDv7 request ids: format, version and variant bits, time order within and across milliseconds,
// and no repeats across many refills of the random pool.
import t from 'tap'
import { uuidv7 } from './request-id.js'

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('format, version 7 and the RFC 9562 variant', async t => {
  for (let i = 0; i < 1000; i++) {
    const id = uuidv7()
    if (!UUIDV7.test(id)) t.fail(`not a UUIDv7: ${id}`)
  }
  t.pass('1,000 ids well formed')
})

t.test('the timestamp is the first 48 bits', async t => {
  const now = Date.UTC(2030, 0, 1)
  const id = uuidv7(now)
  t.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), now)
})

t.test('ids sort in creation order, also within one millisecond, and never repeat', async t => {
  const ids: string[] = []
  for (let i = 0; i < 20_000; i++) ids.push(uuidv7())
  t.same([...ids].sort(), ids, 'sorted as created')
  t.equal(new Set(ids).size, ids.length, 'unique (the random pool is refilled ~80 times)')
  const fixed = Date.now() + 60_000
  const same = [uuidv7(fixed), uuidv7(fixed), uuidv7(fixed)]
  t.same([...same].sort(), same, 'monotonic for one given millisecond')
})
