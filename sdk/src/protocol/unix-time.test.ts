import t from 'tap'
import { describeUnixTime } from './unix-time.js'

t.test('Unix seconds read as an ISO 8601 UTC date beside the number', async t => {
  t.equal(describeUnixTime(0), '1970-01-01T00:00:00Z (0)')
  t.equal(describeUnixTime(1795687200), '2026-11-26T10:00:00Z (1795687200)')
  t.equal(describeUnixTime(1.5), '1970-01-01T00:00:01.500Z (1.5)', 'a fraction keeps its milliseconds')
})

t.test('a number that is no date stays a number', async t => {
  t.equal(describeUnixTime(Number.MAX_SAFE_INTEGER), String(Number.MAX_SAFE_INTEGER))
  t.equal(describeUnixTime(Number.NaN), 'NaN')
})
